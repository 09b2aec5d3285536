"""The Replay view's keys: defaults, and the user's remapping kept in versioned settings."""

from __future__ import annotations

from PySide6.QtCore import QSettings
from PySide6.QtGui import QKeySequence

# name -> (default key, what it does); the names are stable settings keys
REPLAY_KEYS: dict[str, tuple[str, str]] = {
    "step_back": ("Left", "previous step"),
    "step_forward": ("Right", "next step"),
    "back_10": ("Shift+Left", "10 steps back"),
    "forward_10": ("Shift+Right", "10 steps forward"),
    "first": ("Home", "first step"),
    "last": ("End", "last step"),
    "play": ("Space", "play / pause"),
    "slower": ("-", "halve the playback speed"),
    "faster": ("+", "double the playback speed"),
    "next_candidate": ("N", "next deadlock suggestion or label"),
    "previous_candidate": ("P", "previous deadlock suggestion or label"),
    "span_start": ("[", "start a deadlock span at the cursor"),
    "span_end": ("]", "end the span at the cursor"),
    "aware": ("A", "label the selected span Aware"),
    "unaware": ("U", "label the selected span Unaware"),
    "accept": ("Return", "accept the selected suggestion"),
    "reject": ("Delete", "reject the suggestion / delete the span"),
    "awareness_here": ("W", "awareness first shows at the cursor"),
    "undo": ("Ctrl+Z", "undo"),
    "redo": ("Ctrl+Shift+Z", "redo"),
    "zoom_in": ("Ctrl+=", "zoom the timeline in"),
    "zoom_out": ("Ctrl+-", "zoom the timeline out"),
}


def load_keys(settings: QSettings) -> dict[str, QKeySequence]:
    keys = {}
    for name, (default, _) in REPLAY_KEYS.items():
        value = settings.value(f"replay/keys/{name}")
        sequence = QKeySequence(value) if isinstance(value, str) and value else QKeySequence(default)
        keys[name] = sequence if not sequence.isEmpty() else QKeySequence(default)
    return keys


def save_keys(settings: QSettings, keys: dict[str, QKeySequence]) -> None:
    for name, sequence in keys.items():
        settings.setValue(f"replay/keys/{name}", sequence.toString())
