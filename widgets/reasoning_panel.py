"""ReasoningPanel: one entry per step with the thought, the self-assessment colour-coded, the action."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel, QListWidget, QListWidgetItem, QPlainTextEdit, QSplitter, QVBoxLayout, QWidget

from core.episode.records import StepRecord

ASSESSMENT_COLORS = {"progressing": QColor(40, 150, 60), "stuck": QColor(200, 40, 40), "unsure": QColor(200, 140, 0)}


def _one_line(text: object) -> str:
    """Line breaks and runs of spaces as single spaces: every entry of the list stays two lines."""
    return " ".join(str(text).split())


class ReasoningPanel(QWidget):
    sig_step_selected = Signal(int)  # step number the user clicked

    def __init__(self) -> None:
        super().__init__()
        self.thinking = QLabel("")
        self.list = QListWidget()
        # Every entry is two lines (the thought flattened onto the second), so the list may skip measuring
        # each item: otherwise every added step laid out all before it, 26 ms a step at 1,000 steps.
        self.list.setUniformItemSizes(True)
        self.details = QPlainTextEdit()
        self.details.setReadOnly(True)
        self.details.setPlaceholderText("Select a step to see the model's raw reply.")
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.list)
        splitter.addWidget(self.details)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.thinking)
        layout.addWidget(splitter)
        self._records: list[StepRecord] = []
        self.list.currentRowChanged.connect(self._on_row)

    def set_thinking(self, active: bool) -> None:
        self.thinking.setText("<i>thinking…</i>" if active else "")

    def add_step(self, record: StepRecord) -> None:
        self._records.append(record)
        decision = record.decision
        said = (decision.self_assessment if decision is not None else "") or "-"
        error = f"  ⚠ {_one_line(decision.parse_error)}" if decision is not None and decision.parse_error else ""
        usage = decision.usage if decision is not None else {}
        tokens = f"  {usage.get('input_tokens', 0)}+{usage.get('output_tokens', 0)} tok" if usage else ""
        thought = decision.thought if decision is not None else ("" if not record.damaged else f"({record.damaged})")
        text = (f"{record.step:>4}  {record.action}  [{said}]  {record.latency_s:.2f}s{tokens}"
                f"{error}\n      {_one_line(thought)}")
        item = QListWidgetItem(text)
        item.setForeground(ASSESSMENT_COLORS.get(said, QColor(90, 90, 90)))
        self.list.addItem(item)
        self.list.scrollToBottom()

    def clear(self) -> None:
        self._records.clear()
        self.list.clear()
        self.details.clear()

    @property
    def count(self) -> int:
        return self.list.count()

    @Slot(int)
    def _on_row(self, row: int) -> None:
        if 0 <= row < len(self._records):
            record = self._records[row]
            raw = record.decision.raw_reply if record.decision is not None else ""
            self.details.setPlainText(raw or "(no model reply: human or intervention step)")
            self.sig_step_selected.emit(record.step)
