"""The report's tables as read-only Qt tables: success rate per agent x granularity x category (with n),
and the movement metrics per agent x granularity. Numbers are formatted exactly as `python main.py report`
prints them (core.analysis.report.format_value)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from core.analysis.report import MOVEMENT_NOTE, TASK_CATEGORIES, format_value, movement_table


# Wrapped for a narrow column: "IM rate (mean of episodes)" reads "IM rate\n(mean of episodes)".
def _wrapped(header: str) -> str:
    head, paren, tail = header.partition(" (")
    if paren:
        return f"{head}\n({tail}"
    head, comma, tail = header.partition(", ")
    return f"{head},\n{tail}" if comma else header


class _ReportTable(QTableWidget):
    def __init__(self, headers: Sequence[str]) -> None:
        super().__init__(0, len(headers))
        self.setHorizontalHeaderLabels(list(headers))
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setAlternatingRowColors(True)
        self.verticalHeader().setVisible(False)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.horizontalHeader().setStretchLastSection(False)

    def _fill(self, rows: Sequence[Sequence[str]], tips: Sequence[Sequence[str]] | None = None, *,
              fit_columns: bool = True) -> None:
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
        if fit_columns:  # never narrower than its columns, so a splitter cannot cut numbers off
            self.setMinimumWidth(self.horizontalHeader().length() + 2 * self.frameWidth() + 4)

    def texts(self) -> list[list[str]]:
        """What the table shows, row by row (for export checks and tests)."""
        return [[self._cell(r, c).text() for c in range(self.columnCount())] for r in range(self.rowCount())]

    def _cell(self, row: int, column: int) -> QTableWidgetItem:
        item = self.item(row, column)
        assert item is not None  # _fill gives every cell an item
        return item


class SuccessTable(_ReportTable):
    """One row per agent and granularity; a cell reads '25.0% (n=4)', or '-' with no episodes. The last column
    counts successes met on a human's step (not the agent's; failures in the rates), as report.md does."""

    def __init__(self) -> None:
        super().__init__(["agent", "granularity", *TASK_CATEGORIES, "overall", "human-\nassisted"])
        header = self.horizontalHeaderItem(self.columnCount() - 1)
        assert header is not None  # setHorizontalHeaderLabels made one per column
        header.setToolTip(
            "successes met on a human's step in the studio: not the agent's, counted as failures in the rates")

    def set_rows(self, rows: Sequence[dict[str, Any]]) -> None:
        texts, tips = [], []
        for row in rows:
            counts = [*(row[f"n_{c}"] for c in TASK_CATEGORIES), row["episodes"]]
            rates = [*(row[c] for c in TASK_CATEGORIES), row["overall"]]
            cells = [f"{format_value(rate, True)} (n={n})" if n else "-" for rate, n in zip(rates, counts)]
            texts.append([row["agent"], row["granularity"], *cells, str(row.get("human_assisted", 0))])
            tips.append(["", "", *(f"{n} episode(s)" for n in counts), ""])
        self._fill(texts, tips)


class MetricsTable(_ReportTable):
    """The report's movement table (core.analysis.report.movement_table): the same columns, labels and cells,
    so each aggregation (mean of episodes, pooled, longest) is named in its header."""

    def __init__(self) -> None:
        headers, _ = movement_table({"metrics": []})
        super().__init__([_wrapped(header) for header in headers])
        self.setToolTip(MOVEMENT_NOTE)

    def set_rows(self, rows: Sequence[dict[str, Any]]) -> None:
        # Sixteen columns are wider than a laptop screen: this one scrolls sideways rather than widen the
        # window past the screen (a minimum width here set the whole main window's).
        self._fill(movement_table({"metrics": list(rows)})[1], fit_columns=False)
