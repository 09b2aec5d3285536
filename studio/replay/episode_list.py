"""EpisodeList: a folder of episodes as a sortable, filterable table with task, agent, result and
label status, and "next unlabelled". The folder is read in a worker thread. Damaged files are listed
too, in red with the reason, and the rest of the folder lists as usual."""

from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtCore import QSortFilterProxyModel, Qt, Signal, Slot
from PySide6.QtGui import QBrush, QColor, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core.labels.episodes import EpisodeLabels, FolderScan, scan_folder
from core.labels.export import export_labels
from core.recording.errors import EpisodeFileError
from studio.replay.agreement_dialog import AgreementDialog

COLUMNS = ("Episode", "Task", "Category", "Instructions", "Agent", "Result", "Steps", "Labels")
PATH_ROLE = Qt.ItemDataRole.UserRole + 1
LABELLED_ROLE = Qt.ItemDataRole.UserRole + 2
DAMAGED_ROLE = Qt.ItemDataRole.UserRole + 3  # 1: the file, or its labels, cannot be read (nothing to label)
DAMAGED_COLOUR = QColor("#b3261e")


def label_status(episode: EpisodeLabels) -> tuple[str, bool]:
    """Text for the Labels column, and whether any human confirmed a category or labelled a span."""
    if episode.labels_error is not None:
        return "unreadable (damaged)", False
    humans = []
    for name, labels in episode.document.annotators.items():
        done = labels.category_confirmed or any(not span.pending for span in labels.spans)
        humans.append(f"{name}{'' if done else ' (started)'}")
    labelled = any(not text.endswith("(started)") for text in humans)
    return (", ".join(humans) if humans else "unlabelled"), labelled


def damaged_text(error: EpisodeFileError) -> str:
    """The Result column of a file that is not a readable episode: the damaged part and what is wrong."""
    return f"damaged: {error.part}: {error.problem}"


def result_text(episode: EpisodeLabels) -> str:
    result = episode.result
    if result is None:
        return "cut short"
    if result.get("success"):
        return "success"
    return f"{result.get('end_reason')} · {result.get('failure_category_suggestion') or ''}".strip(" ·")


class EpisodeList(QWidget):
    sig_open = Signal(str)            # an episode the user picked
    sig_status = Signal(str)
    _sig_loaded = Signal(object)  # the FolderScan, from the folder thread

    def __init__(self) -> None:
        super().__init__()
        self.model = QStandardItemModel(0, len(COLUMNS))
        self.model.setHorizontalHeaderLabels(list(COLUMNS))
        self.proxy = QSortFilterProxyModel()
        self.proxy.setSourceModel(self.model)
        self.proxy.setFilterKeyColumn(-1)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QTableView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("filter: task, agent, result, annotator…")
        self.next_unlabelled = QPushButton("Next unlabelled")
        self.agreement = QPushButton("Agreement…")
        self.export = QPushButton("Export labels…")
        self.folder_label = QLabel("No folder open (File → Open folder…)")
        self.folder_label.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(self.filter, 1)
        row.addWidget(self.next_unlabelled)
        tools = QHBoxLayout()
        tools.addWidget(self.agreement)
        tools.addWidget(self.export)
        tools.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.folder_label)
        layout.addLayout(row)
        layout.addWidget(self.table, 1)
        layout.addLayout(tools)
        self.filter.textChanged.connect(self.proxy.setFilterFixedString)
        self.table.activated.connect(self._activated)
        self.next_unlabelled.clicked.connect(self.open_next_unlabelled)
        self.agreement.clicked.connect(self.show_agreement)
        self.export.clicked.connect(self.choose_export)
        for button in (self.agreement, self.export):
            button.setEnabled(False)
        self._sig_loaded.connect(self._on_loaded)
        self.folder: Path | None = None
        self.current: str | None = None
        self._thread: threading.Thread | None = None
        self._export: threading.Thread | None = None

    def open_folder(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.folder_label.setText(f"Reading {folder}…")
        self._thread = threading.Thread(target=self._load, args=(self.folder,), name="studio-folder", daemon=True)
        self._thread.start()

    def wait_loaded(self) -> None:
        for thread in (self._thread, self._export):
            if thread is not None:
                thread.join()

    def _load(self, folder: Path) -> None:
        self._sig_loaded.emit(scan_folder(folder))

    @Slot(object)
    def _on_loaded(self, scan: FolderScan) -> None:
        self.model.removeRows(0, self.model.rowCount())
        for episode in scan.episodes:
            labels, labelled = label_status(episode)
            metadata = episode.metadata
            agent = metadata.get("agent")
            cells = [episode.path.name, metadata.get("task_id", "?"), metadata.get("category", "?"),
                     metadata.get("granularity", "?"), agent.get("name", "?") if isinstance(agent, dict) else agent,
                     result_text(episode), episode.step_count, labels]
            error = episode.labels_error
            # Unreadable labels: only the Labels cell is red, the recording itself is fine.
            self._add_row(episode.path, cells, labelled, str(error) if error is not None else "",
                          red=[len(COLUMNS) - 1])
        for damaged in scan.damaged:
            # The reason goes right after the name (where the task would be), so it is read without scrolling.
            self._add_row(damaged.path, [damaged.path.name, damaged_text(damaged), "", "", "", "damaged", "", "—"],
                          False, str(damaged), red=list(range(len(COLUMNS))))
        self.table.resizeColumnsToContents()
        self.table.setColumnWidth(1, min(self.table.columnWidth(1), 360))  # a long reason is in the tooltip
        unreadable = sum(e.labels_error is not None for e in scan.episodes)
        problems = [f"{len(scan.damaged)} damaged file(s) listed in red"] if scan.damaged else []
        problems += [f"{unreadable} with unreadable labels"] if unreadable else []
        self.folder_label.setText(f"{self.folder}: {len(scan.episodes)} episodes"
                                  + (f"; {', '.join(problems)} (hover a row for the reason)" if problems else ""))
        for button in (self.agreement, self.export):
            button.setEnabled(bool(scan.episodes))
        self.sig_status.emit(self.folder_label.text())

    def _add_row(self, path: Path, cells: list[object], labelled: bool, problem: str, red: list[int]) -> None:
        """One row; with a `problem`, every cell's tooltip says it and the `red` columns are drawn in red."""
        items = []
        for column, value in enumerate(cells):
            item = QStandardItem()
            item.setData(value, Qt.ItemDataRole.DisplayRole)
            item.setData(str(path), PATH_ROLE)
            item.setData(1 if labelled else 0, LABELLED_ROLE)  # an int: PySide6 mis-counts bools in roles
            item.setData(1 if problem else 0, DAMAGED_ROLE)
            if problem:
                item.setToolTip(problem)
                if column in red:
                    item.setForeground(QBrush(DAMAGED_COLOUR))
            items.append(item)
        self.model.appendRow(items)

    @property
    def rows(self) -> int:
        return self.proxy.rowCount()

    def path_at(self, row: int) -> str:
        return str(self.proxy.index(row, 0).data(PATH_ROLE))

    def mark_labelled(self, path: str, annotator: str) -> None:
        """Labels were saved for `path` by `annotator` in this session: update its row."""
        for row in range(self.model.rowCount()):
            if self.model.item(row, 0).data(PATH_ROLE) == path:
                for column in range(len(COLUMNS)):
                    self.model.item(row, column).setData(1, LABELLED_ROLE)
                cell = self.model.item(row, len(COLUMNS) - 1)
                names = [n for n in str(cell.data(Qt.ItemDataRole.DisplayRole)).split(", ")
                         if n and n != "unlabelled" and n.removesuffix(" (started)") != annotator]
                cell.setData(", ".join([*names, annotator]), Qt.ItemDataRole.DisplayRole)

    @Slot()
    def open_next_unlabelled(self) -> None:
        rows = list(range(self.proxy.rowCount()))
        start = next((r for r in rows if self.path_at(r) == self.current), -1)
        for row in rows[start + 1:] + rows[:start + 1]:
            index = self.proxy.index(row, 0)
            if not index.data(LABELLED_ROLE) and not index.data(DAMAGED_ROLE) and self.path_at(row) != self.current:
                self.table.selectRow(row)
                self.current = self.path_at(row)
                self.sig_open.emit(self.current)
                return
        self.sig_status.emit("Every episode in this list is labelled.")

    @Slot()
    def show_agreement(self) -> None:
        if self.folder is not None:
            AgreementDialog(self.folder, self).exec()

    @Slot()
    def choose_export(self) -> None:
        if self.folder is None:
            return
        path, chosen = QFileDialog.getSaveFileName(self, "Export labels", str(self.folder / "labels.csv"),
                                                   "CSV (*.csv);;JSON lines (*.jsonl)")
        if path:
            self.export_to(Path(path), "jsonl" if path.endswith(".jsonl") or "jsonl" in chosen else "csv")

    def export_to(self, path: Path, fmt: str) -> None:
        """Every label in the folder, one row per span and per episode category (docs/labels-format.md).
        Reading every episode can take a while: it runs in a thread, and sig_status reports the outcome."""
        assert self.folder is not None
        self.sig_status.emit(f"Exporting the labels of {self.folder}…")
        self._export = threading.Thread(target=self._export_labels, args=(self.folder, path, fmt),
                                        name="studio-export", daemon=True)
        self._export.start()

    def _export_labels(self, folder: Path, path: Path, fmt: str) -> None:
        try:
            with path.open("w", encoding="utf-8", newline="") as stream:
                result = export_labels(folder, stream, fmt)  # type: ignore[arg-type]
        except OSError as exc:
            self.sig_status.emit(f"Could not export labels to {path}: {exc.strerror or exc}")
            return
        skipped = (f"; left out {len(result.warnings)} damaged file(s) or unreadable labels (the list says why)"
                   if result.warnings else "")
        self.sig_status.emit(f"Exported {result.rows} label rows from {result.episodes} episodes to {path}{skipped}")

    @Slot(object)
    def _activated(self, index: object) -> None:
        self.current = str(index.data(PATH_ROLE))  # type: ignore[attr-defined]
        self.sig_open.emit(self.current)
