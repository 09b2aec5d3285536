"""MessageBanner: one line of news for the user (loading, a warning, an error and what to do), coloured by
level and hidden when there is nothing to say. Long detail goes in the tooltip."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

_STYLES = {
    "info": "background: #eef3f8; color: #1f3b57;",
    "warning": "background: #fff4d6; color: #6b4a00;",
    "error": "background: #fde2e1; color: #8a1c14; font-weight: bold;",
}


class MessageBanner(QLabel):
    def __init__(self) -> None:
        super().__init__()
        self.setWordWrap(True)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.level = ""
        self.clear_message()

    def show_message(self, level: str, text: str, details: str = "") -> None:
        self.level = level
        self.setText(text)
        self.setToolTip(details)
        self.setStyleSheet(f"QLabel {{ {_STYLES[level]} padding: 6px; border-radius: 3px; }}")
        self.setVisible(True)

    def clear_message(self) -> None:
        self.level = ""
        self.setText("")
        self.setToolTip("")
        self.setVisible(False)
