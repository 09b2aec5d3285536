"""LiveTimeline: the running episode's timeline with its caption and the Back-to-live button. What it
shows (steps, marks, deadlock spans, the cursor) is drawn by the shared pane set (studio/episode_panes.py);
this widget only lays it out."""

from __future__ import annotations

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSizePolicy, QVBoxLayout, QWidget

from widgets.timeline import Timeline

KEEP_STEPS = 600  # half-size frames of the most recent steps (about 100 MB); older ones: open the recording


class LiveTimeline(QWidget):
    def __init__(self) -> None:
        super().__init__()
        self.timeline = Timeline()
        self.timeline.empty_text = "Steps appear here as an episode runs"
        self.back = QPushButton("Back to live (Esc)")
        self.back.setEnabled(False)
        self.caption = QLabel("Steps of this episode: click one to see what the agent saw.")
        self.caption.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        row = QHBoxLayout()
        row.addWidget(self.caption, 1)
        row.addWidget(self.back)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.timeline)

    @Slot(bool)
    def set_following(self, following: bool) -> None:
        """The cursor follows the newest step (nothing to go back to) or shows an earlier one."""
        self.back.setEnabled(not following)
