"""InstructionBar: the task's title and the exact instruction text the agent receives, above the game."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSizePolicy

from core.evaluation.tasks import Task

GRANULARITY_NAMES = {"visual_guided": "visual-guided", "step_guided": "step-guided", "goal_only": "goal-only"}


class InstructionBar(QLabel):
    def __init__(self) -> None:
        super().__init__("")
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Maximum)  # never widens the window
        self.setStyleSheet("QLabel { background: #f4f6fa; border-bottom: 1px solid #d0d6e0; padding: 3px 6px; }")
        self.instruction = ""
        self.running = False

    def show_task(self, task: Task, granularity: str, running: bool) -> None:
        """The instruction for `granularity`; `running` says the agent has it now (else: it will at Start)."""
        self.instruction, self.running = task.instruction(granularity), running
        when = "the agent's instruction" if running else "instruction at Start"
        self.setText(f"<b>{html.escape(task.title)}</b> <span style='color:#667'>({html.escape(task.id)}, "
                     f"{GRANULARITY_NAMES.get(granularity, granularity)} — {when})</span><br>"
                     f"{html.escape(self.instruction)}")
        self.setToolTip(self.instruction)
