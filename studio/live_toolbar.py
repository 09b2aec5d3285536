"""The Live view's toolbar: its actions, their shortcuts and what they do (also for Help → Keyboard shortcuts)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow

ACTIONS = (  # name, shortcut, what it does (for Help > Keyboard shortcuts)
    ("Start", "Ctrl+R", "start an episode with the chosen settings"),
    ("Pause", "Ctrl+P", "pause the agent after the current step"),
    ("Resume", "Ctrl+Shift+P", "resume the agent"),
    ("Step", "Ctrl+N", "let the agent take exactly one step"),
    ("Stop", "Ctrl+.", "end the episode (the recording is closed cleanly)"),
    ("Push back", "Ctrl+B", "physical intervention: walk the character back"),
    ("Turn around", "Ctrl+T", "physical intervention: turn the camera 180°"),
    ("Send hint…", "Ctrl+H", "text intervention: free text in the agent's next prompt"),
    ("Take control", "Ctrl+K", "pause the agent and drive yourself (again to hand back); between episodes the keys "
                               "drive without it"),
    ("Restart world", "Ctrl+Shift+R", "start a fresh built-in world"),
    ("Back to live", "Esc", "after looking at an earlier step, show the game again"),
)


def build_toolbar(window: QMainWindow, slots: dict[str, Callable[[], None]]) -> dict[str, QAction]:
    """The toolbar's actions by name, each connected to its slot; plus a checkable "Overlays"."""
    bar = window.addToolBar("Controls")
    bar.setObjectName("controls")
    actions = {}
    for name, shortcut, tip in ACTIONS:
        action = QAction(name, window)
        action.setShortcut(QKeySequence(shortcut))
        action.setToolTip(f"{tip} ({shortcut})")
        action.triggered.connect(slots[name])
        bar.addAction(action)
        actions[name] = action
        if name in ("Stop", "Send hint…"):
            bar.addSeparator()
    overlays = QAction("Overlays", window)
    overlays.setCheckable(True)
    overlays.setChecked(True)
    bar.addAction(overlays)
    actions["Overlays"] = overlays
    return actions
