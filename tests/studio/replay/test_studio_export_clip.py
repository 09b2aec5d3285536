"""Replay's Export clip… (pytest-qt, offscreen): Shift+drag selects steps on the timeline, the dialog takes that
range, the clip is written off the GUI thread (the replay keeps seeking meanwhile) with progress, and Cancel
stops it leaving no file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PIL import Image
from PySide6.QtCore import QPoint, Qt

from core.episode.synthetic import write_long_episode

STEPS = 60


@pytest.fixture
def opened(window, qtbot, tmp_path):
    frames = [np.full((72, 128, 3), 10 + 3 * i, np.uint8) for i in range(STEPS)]
    path = write_long_episode(tmp_path / "episode.h5", STEPS, frames, seed=5, frames_per_step=2)
    with qtbot.waitSignal(window.replay.sig_opened, timeout=20_000):
        window.open_path(str(path))
    qtbot.waitUntil(lambda: window.replay.shown_index == 0, timeout=10_000)
    return window.replay


def at(timeline, position: int) -> QPoint:
    return QPoint(round(timeline._x(position + 0.5)), 8)


def test_shift_drag_selects_steps_and_the_clip_is_written_off_the_gui_thread(opened, qtbot, tmp_path):
    replay = opened
    replay.seek(9)
    timeline = replay.timeline
    with qtbot.waitSignal(timeline.sig_selection_changed, timeout=2_000):
        qtbot.mousePress(timeline, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ShiftModifier, at(timeline, 12))
    qtbot.mouseMove(timeline, at(timeline, 19))
    qtbot.mouseRelease(timeline, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ShiftModifier, at(timeline, 19))
    assert timeline.selection == (12, 19)  # a drag selects from where it started, not from the cursor (9)
    qtbot.mouseClick(timeline, Qt.MouseButton.LeftButton, pos=at(timeline, 30))  # a plain click seeks
    assert replay.cursor == 30 and timeline.selection == (12, 19)
    qtbot.mouseClick(timeline, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ShiftModifier, at(timeline, 34))
    assert timeline.selection == (30, 34)  # a Shift+click extends from the cursor
    qtbot.mousePress(timeline, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ShiftModifier, at(timeline, 20))
    qtbot.mouseMove(timeline, at(timeline, 9))  # leftwards too
    qtbot.mouseRelease(timeline, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ShiftModifier, at(timeline, 9))
    assert timeline.selection == (9, 20)

    qtbot.mouseClick(replay.export_button, Qt.MouseButton.LeftButton)
    dialog = replay.clip_dialog
    assert dialog is not None and dialog.isVisible() and not dialog.isModal()
    assert (dialog.first.value(), dialog.last.value()) == (10, 21) and dialog.use_frames.isChecked()
    dialog.format.setCurrentIndex(dialog.format.findData(".gif"))
    dialog.width_box.setValue(320)
    out = tmp_path / "clips" / "selected.gif"
    dialog.path.setText(str(out))
    with qtbot.waitSignal(dialog.sig_exported, timeout=60_000) as written:
        qtbot.mouseClick(dialog.export_button, Qt.MouseButton.LeftButton)
        replay.seek(3)  # the replay answers while the clip is written
        qtbot.waitUntil(lambda: replay.shown_index == 3, timeout=5_000)
    assert written.args == [str(out)] and "Wrote" in dialog.status.text()
    assert dialog.progress.value() == dialog.progress.maximum() > 0
    with Image.open(out) as gif:
        assert gif.size[0] == 320 and gif.n_frames >= 11  # eleven steps, each with its in-between frames
    assert replay.status_message.full_text() == f"Clip written: {out}"
    dialog.close()


def test_cancel_stops_the_export_and_leaves_no_file(opened, qtbot, tmp_path):
    replay = opened
    replay.timeline.set_selection(0, STEPS - 1)
    replay.open_export_clip()
    dialog = replay.clip_dialog
    dialog.format.setCurrentIndex(dialog.format.findData(".gif"))
    dialog.width_box.setValue(1920)  # slow enough to cancel midway
    out = tmp_path / "whole.gif"
    dialog.path.setText(str(out))
    qtbot.mouseClick(dialog.export_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.progress.value() > 0, timeout=30_000)
    assert not dialog.export_button.isEnabled() and dialog.cancel_button.isEnabled()
    with qtbot.waitSignal(dialog.job.sig_cancelled, timeout=30_000):
        qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
    assert "Cancelled" in dialog.status.text() and dialog.export_button.isEnabled()
    assert not out.exists() and [p.name for p in tmp_path.iterdir() if p.suffix == ".gif"] == []
    assert dialog.job.wait(5.0)
    dialog.close()


def test_export_clip_without_an_episode_says_what_to_do(window, qtbot):
    window.replay.open_export_clip()
    assert "Open an episode first" in window.replay.status_message.full_text()
    assert window.replay.clip_dialog is not None and not window.replay.clip_dialog.isVisible()


def test_a_failed_export_is_reported_in_the_dialog(opened, qtbot, tmp_path):
    replay = opened
    replay.open_export_clip()
    dialog = replay.clip_dialog
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    dialog.format.setCurrentIndex(dialog.format.findData(".gif"))
    dialog.path.setText(str(blocker / "clip.gif"))  # a folder that cannot exist
    with qtbot.waitSignal(dialog.job.sig_failed, timeout=30_000):
        qtbot.mouseClick(dialog.export_button, Qt.MouseButton.LeftButton)
    assert dialog.status.text().startswith("Could not export the clip:") and "a_file" in dialog.status.text()
    assert dialog.export_button.isEnabled()
    dialog.close()


def test_closing_the_studio_mid_export_stops_the_thread(opened, qtbot, tmp_path, window):
    replay = opened
    replay.timeline.set_selection(0, STEPS - 1)
    replay.open_export_clip()
    dialog = replay.clip_dialog
    dialog.format.setCurrentIndex(dialog.format.findData(".gif"))
    dialog.width_box.setValue(1920)
    dialog.path.setText(str(tmp_path / "long.gif"))
    qtbot.mouseClick(dialog.export_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.progress.value() > 0, timeout=30_000)
    window.close()  # shut_down cancels and waits; the no_leaks fixture checks no thread is left
    assert not dialog.job.running and not Path(tmp_path / "long.gif").exists()


def test_with_sound_is_offered_for_an_mp4_of_a_recording_with_sound(window, qtbot, tmp_path):
    av = pytest.importorskip("av", reason="MP4 clips need PyAV: install the export extra")
    frames = [np.full((72, 128, 3), 10 + 3 * i, np.uint8) for i in range(20)]
    path = write_long_episode(tmp_path / "heard.h5", 20, frames, seed=5, sound=True)
    with qtbot.waitSignal(window.replay.sig_opened, timeout=20_000):
        window.open_path(str(path))
    replay = window.replay
    replay.timeline.set_selection(0, 9)
    replay.open_export_clip()
    dialog = replay.clip_dialog
    dialog.format.setCurrentIndex(dialog.format.findData(".mp4"))
    assert dialog.with_sound.isEnabled() and dialog.with_sound.isChecked()  # on by default: the recording has sound
    dialog.width_box.setValue(320)
    for name, ticked in (("heard.mp4", True), ("silent.mp4", False)):
        dialog.with_sound.setChecked(ticked)
        out = tmp_path / name
        dialog.path.setText(str(out))
        with qtbot.waitSignal(dialog.sig_exported, timeout=60_000):
            qtbot.mouseClick(dialog.export_button, Qt.MouseButton.LeftButton)
        with av.open(str(out)) as container:
            assert len(container.streams.audio) == (1 if ticked else 0), name
        assert ("with sound" in dialog.status.text()) == ticked
    dialog.format.setCurrentIndex(dialog.format.findData(".gif"))
    assert not dialog.with_sound.isEnabled()  # a GIF has no sound
    dialog.close()


def test_with_sound_is_not_offered_for_a_recording_without_sound(opened):
    opened.open_export_clip()
    dialog = opened.clip_dialog
    dialog.format.setCurrentIndex(dialog.format.findData(".mp4"))
    assert not dialog.with_sound.isEnabled() and not dialog.with_sound.isChecked()
    assert dialog.with_sound.toolTip() == "This recording has no sound"
    dialog.close()
