"""The report's tables as read-only Qt tables: success rate per agent x granularity x category (with n),
and the movement metrics per agent x granularity. Numbers are formatted exactly as `python main.py report`
prints them (core.analysis.report.format_value)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from core.analysis.report import TASK_CATEGORIES, format_value

_METRIC_COLUMNS = (  # (key, header, shown as a percentage)
    ("avg_successful_steps", "mean succ.\nsteps", False), ("im_rate", "IM rate", True),
    ("max_consecutive_im", "max consec.\nIMs", False), ("recovery_rate", "recovery\nrate", True),
    ("action_entropy_bits", "entropy\n(bits)", False),
)
_SPAN_COLUMNS = (  # deadlock spans by what the agent said during them (docs/metrics.md)
    ("deadlock_spans", "dead-\nlocks"), ("spans_aware", "aware"), ("spans_unaware", "un-\naware"),
    ("spans_unclassified", "unclass-\nified"),
)


class _ReportTable(QTableWidget):
    def __init__(self, headers: Sequence[str]) -> None:
        super().__init__(0, len(headers))
        self.setHorizontalHeaderLabels(list(headers))
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setAlternatingRowColors(True)
        self.verticalHeader().setVisible(False)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.horizontalHeader().setStretchLastSection(False)

    def _fill(self, rows: Sequence[Sequence[str]], tips: Sequence[Sequence[str]] | None = None) -> None:
        self.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                item = QTableWidgetItem(text)
                if c >= 2:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if tips is not None and tips[r][c]:
                    item.setToolTip(tips[r][c])
                self.setItem(r, c, item)
        self.resizeColumnsToContents()
        # never narrower than its columns, so a splitter cannot cut numbers off
        self.setMinimumWidth(self.horizontalHeader().length() + 2 * self.frameWidth() + 4)

    def texts(self) -> list[list[str]]:
        """What the table shows, row by row (for export checks and tests)."""
        return [[self.item(r, c).text() for c in range(self.columnCount())] for r in range(self.rowCount())]


class SuccessTable(_ReportTable):
    """One row per agent and granularity; a cell reads '25.0% (n=4)', or '-' with no episodes."""

    def __init__(self) -> None:
        super().__init__(["agent", "granularity", *TASK_CATEGORIES, "overall"])

    def set_rows(self, rows: Sequence[dict[str, Any]]) -> None:
        texts, tips = [], []
        for row in rows:
            counts = [*(row[f"n_{c}"] for c in TASK_CATEGORIES), row["episodes"]]
            rates = [*(row[c] for c in TASK_CATEGORIES), row["overall"]]
            cells = [f"{format_value(rate, True)} (n={n})" if n else "-" for rate, n in zip(rates, counts)]
            texts.append([row["agent"], row["granularity"], *cells])
            tips.append(["", "", *(f"{n} episode(s)" for n in counts)])
        self._fill(texts, tips)


class MetricsTable(_ReportTable):
    """One row per agent and granularity: IM rate, recovery rate, action entropy, mean successful steps."""

    def __init__(self) -> None:
        super().__init__(["agent", "granularity", *(header for _, header, _ in _METRIC_COLUMNS),
                          *(header for _, header in _SPAN_COLUMNS)])
        self.horizontalHeaderItem(self.columnCount() - 1).setToolTip(
            "spans whose self-assessments were missing, unreadable or unsure: left for a human label")

    def set_rows(self, rows: Sequence[dict[str, Any]]) -> None:
        self._fill([[row["agent"], row["granularity"],
                     *(format_value(row[key], percent) for key, _, percent in _METRIC_COLUMNS),
                     *(str(row.get(key, 0)) for key, _ in _SPAN_COLUMNS)] for row in rows])
