"""TaskList: every task of the suite (and any authored this session) with its category, quest, start,
budget and reference length; choosing one selects it for the next episode and draws its goal and
route on the trajectory plot."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import QAbstractItemView, QLineEdit, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from core.evaluation.tasks import Task

COLUMNS = ("Task", "Title", "Category", "Quest", "Start", "Budget", "Reference steps")


def _text(table: QTableWidget, row: int, column: int) -> str:
    item = table.item(row, column)
    assert item is not None  # every cell of the list is filled
    return item.text()


class TaskList(QWidget):
    sig_task_chosen = Signal(str)  # task id

    def __init__(self, tasks: list[Task]) -> None:
        super().__init__()
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("filter tasks…")
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.filter)
        layout.addWidget(self.table, 1)
        self.filter.textChanged.connect(self._filter)
        self.table.itemSelectionChanged.connect(self._chosen)
        self.set_tasks(tasks)

    def set_tasks(self, tasks: list[Task]) -> None:
        self.table.setSortingEnabled(False)
        self.table.setRowCount(len(tasks))
        for row, task in enumerate(tasks):
            start = task.start_state if isinstance(task.start_state, str) else "captured"
            cells = (task.id, task.title, task.category, task.quest, start, task.step_budget,
                     task.reference_steps or "")
            for column, value in enumerate(cells):
                item = QTableWidgetItem()
                item.setData(Qt.ItemDataRole.DisplayRole, value)
                self.table.setItem(row, column, item)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)  # q01, q02, ... as the suite is numbered
        self.table.resizeColumnsToContents()
        self._filter(self.filter.text())

    @property
    def task_ids(self) -> list[str]:
        return [_text(self.table, row, 0) for row in range(self.table.rowCount())]

    @Slot(str)
    def _filter(self, text: str) -> None:
        needle = text.lower()
        for row in range(self.table.rowCount()):
            cells = " ".join(_text(self.table, row, c).lower() for c in range(len(COLUMNS)))
            self.table.setRowHidden(row, bool(needle) and needle not in cells)

    @Slot()
    def _chosen(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        if rows:
            self.sig_task_chosen.emit(_text(self.table, rows[0].row(), 0))
