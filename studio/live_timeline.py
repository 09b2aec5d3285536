"""LiveTimeline: the running episode's steps on a timeline (interventions, human steps, parse errors,
success, suggested deadlock spans) and the frames the agent saw at recent steps, so that clicking a
step there or in the reasoning panel shows what the model was looking at."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSizePolicy, QVBoxLayout, QWidget

from widgets.timeline import Timeline, TimelineSpan

KEEP_STEPS = 600  # half-size frames of the most recent steps (about 100 MB); older ones: open the recording


class LiveTimeline(QWidget):
    sig_view_step = Signal(int, object)  # step and the frame the agent saw (None: not kept), or -1: back to live

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
        self.timeline.sig_seek.connect(self._seek)
        self.back.clicked.connect(self.back_to_live)
        self.reset()

    def reset(self) -> None:
        self.steps: list[int] = []
        self.frames: OrderedDict[int, np.ndarray] = OrderedDict()
        self.marks: dict[str, list[int]] = {"success": [], "intervention": [], "human": [], "parse_error": []}
        self.timeline.set_episode(0, [])
        self.back.setEnabled(False)

    def add_observation(self, step: int, images: dict[str, Any]) -> None:
        current = images.get("current")
        if current is not None:
            self.frames[step] = np.ascontiguousarray(current[::2, ::2])  # a copy at half size
            while len(self.frames) > KEEP_STEPS:
                self.frames.popitem(last=False)

    def add_step(self, record: dict[str, Any]) -> None:
        step = int(record["step"])
        position = len(self.steps)
        self.steps.append(step)
        if record.get("intervention"):
            self.marks["intervention"].append(position)
        if record.get("source") == "human":
            self.marks["human"].append(position)
        if record.get("parse_error"):
            self.marks["parse_error"].append(position)
        self.timeline.append_step(step)
        self.timeline.set_marks(self.marks)
        if not self.back.isEnabled():
            self.timeline.set_cursor(position)

    def set_deadlocks(self, spans: list[tuple[int, int]]) -> None:
        """Spans as 0-based step positions, first and last inclusive (as the metrics give them)."""
        last = len(self.steps) - 1
        self.timeline.set_spans([TimelineSpan(min(a, last), min(b, last), "suggested") for a, b in spans if a <= last])

    def mark_success(self, step: int) -> None:
        if step in self.steps:
            self.marks["success"] = [self.steps.index(step)]
            self.timeline.set_marks(self.marks)

    @Slot(int)
    def _seek(self, position: int) -> None:
        if 0 <= position < len(self.steps):
            self.select_step(self.steps[position])

    @Slot(int)
    def select_step(self, step: int) -> None:
        if step in self.steps:
            self.timeline.set_cursor(self.steps.index(step))
        self.back.setEnabled(True)
        self.sig_view_step.emit(step, self.frames.get(step))

    @Slot()
    def back_to_live(self) -> None:
        self.back.setEnabled(False)
        if self.steps:
            self.timeline.set_cursor(len(self.steps) - 1)
        self.sig_view_step.emit(-1, None)
