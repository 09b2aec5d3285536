"""The speaker's mute and volume in the studio's settings, one pair per view (`live/`, `replay/`)."""

from __future__ import annotations

import contextlib

from PySide6.QtCore import QSettings

from widgets.sound_pane import SoundPane


def save_sound(settings: QSettings, view: str, pane: SoundPane) -> None:
    settings.setValue(f"{view}/sound_muted", pane.mute.isChecked())
    settings.setValue(f"{view}/sound_volume", pane.volume.value())


def restore_sound(settings: QSettings, view: str, pane: SoundPane) -> None:
    """Applied through the pane's controls, so the speaker hears of them as of a click."""
    muted = settings.value(f"{view}/sound_muted")
    if muted is not None:
        pane.set_muted(str(muted).lower() == "true")
    volume = settings.value(f"{view}/sound_volume")
    with contextlib.suppress(ValueError):  # not set, or not a number: the default stays
        pane.volume.setValue(max(0, min(100, int(str(volume)))))
