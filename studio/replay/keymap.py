"""The Replay view's keys: defaults, and the user's remapping kept in versioned settings."""

from __future__ import annotations

from typing import cast

from PySide6.QtCore import QEvent, QObject, QSettings, Qt
from PySide6.QtGui import QKeyEvent, QKeySequence

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
    "split": ("S", "split the selected span at the cursor"),
    "undo": ("Ctrl+Z", "undo"),
    "redo": ("Ctrl+Shift+Z", "redo"),
    "zoom_in": ("Ctrl+=", "zoom the timeline in"),
    "zoom_out": ("Ctrl+-", "zoom the timeline out"),
}


def valid_sequence(text: object) -> QKeySequence | None:
    """A key sequence Qt understands fully (an unknown key name would leave the action unbound)."""
    if not isinstance(text, str) or not text:
        return None
    sequence = QKeySequence(text)
    # Qt parses an unknown key name into a sequence that prints as "" (and matches nothing).
    return None if sequence.isEmpty() or not sequence.toString() else sequence


def duplicates(keys: dict[str, QKeySequence]) -> list[str]:
    """Key sequences bound to more than one action (Qt would treat them as ambiguous and fire none)."""
    seen: dict[str, str] = {}
    clashes = []
    for name, sequence in keys.items():
        text = sequence.toString()
        if text and text in seen:
            clashes.append(f"{text}: {REPLAY_KEYS[seen[text]][1]} and {REPLAY_KEYS[name][1]}")
        seen.setdefault(text, name)
    return clashes


def load_keys(settings: QSettings) -> dict[str, QKeySequence]:
    """The user's keys; an unreadable or clashing entry falls back to its default."""
    keys = {name: valid_sequence(settings.value(f"replay/keys/{name}")) or QKeySequence(default)
            for name, (default, _) in REPLAY_KEYS.items()}
    taken: set[str] = set()
    for name, (default, _) in REPLAY_KEYS.items():
        if keys[name].toString() in taken:
            keys[name] = QKeySequence(default)
        taken.add(keys[name].toString())
    return keys


def save_keys(settings: QSettings, keys: dict[str, QKeySequence]) -> None:
    for name, sequence in keys.items():
        settings.setValue(f"replay/keys/{name}", sequence.toString())


class TextFieldsKeepKeys(QObject):
    """Event filter: while a text field or a list has focus, Return and Enter go to it, not to the
    Replay view's "accept" shortcut (Qt offers shortcuts first unless the widget claims the key)."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ShortcutOverride and cast(QKeyEvent, event).key() in (
                Qt.Key.Key_Return, Qt.Key.Key_Enter):  # a ShortcutOverride event is a QKeyEvent
            event.accept()
        return False
