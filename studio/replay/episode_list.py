"""EpisodeList: a folder of episodes as a sortable, filterable table with task, result and label status
(agent, instructions, steps, category and file name one right-click away), "next unlabelled", label
export and agreement. A single click opens an episode. The folder is read on a worker with progress
and a Cancel button; a slow folder can never overwrite a newer one. Damaged files are listed too, in
red with the reason, and the rest of the folder lists as usual."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from PySide6.QtCore import QModelIndex, QPoint, QSortFilterProxyModel, Qt, Signal, Slot
from PySide6.QtGui import QBrush, QColor, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QSizePolicy,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core.labels.episodes import EpisodeLabels, FolderScan
from core.labels.export import ExportFormat, episode_rows, write_rows
from core.recording.errors import EpisodeFileError
from studio.replay.agreement_dialog import AgreementDialog
from studio.replay.folder_reader import FolderReader

COLUMNS = ("Task", "Result", "Labels", "Agent", "Instructions", "Steps", "Category", "Episode")
SHOWN = ("Task", "Result", "Labels")  # what fits a narrow dock; right-click the header for the rest
PATH_ROLE = Qt.ItemDataRole.UserRole + 1
LABELLED_ROLE = Qt.ItemDataRole.UserRole + 2
DAMAGED_ROLE = Qt.ItemDataRole.UserRole + 3  # 1: the file, or its labels, cannot be read (nothing to label)
DAMAGED_COLOUR = QColor("#b3261e")
EXPORT_FILTERS: dict[str, ExportFormat] = {"CSV (*.csv)": "csv", "JSON lines (*.jsonl)": "jsonl"}


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


def result_text(episode: EpisodeLabels) -> str:
    result = episode.result
    if result is None:
        return "cut short"
    if result.get("success"):
        return "success (human-assisted)" if result.get("success_source") == "human" else "success"
    if result.get("end_reason") == "stopped":
        return "stopped by user"
    if result.get("end_reason") == "unjudged":  # free play: neither a success nor a failure
        return f"unjudged ({result.get('unjudged') or 'no memory profile'})"
    return f"{result.get('end_reason')} · {result.get('failure_category_suggestion') or ''}".strip(" ·")


def damaged_text(error: EpisodeFileError) -> str:
    """What a file that is not a readable episode shows: the damaged part and what is wrong."""
    return f"damaged: {error.part}: {error.problem}"


def export_path(chosen: str, selected_filter: str) -> tuple[Path, ExportFormat]:
    """The file the user chose, with the extension of the format picked added when they typed none."""
    path = Path(chosen)
    if path.suffix.lower() in (".csv", ".jsonl"):
        return path, "jsonl" if path.suffix.lower() == ".jsonl" else "csv"
    fmt = EXPORT_FILTERS.get(selected_filter, "csv")
    return path.with_name(f"{path.name}.{fmt}"), fmt


def write_export(episodes: list[EpisodeLabels], folder: Path, path: Path, fmt: ExportFormat) -> int:
    """Write the rows to a temporary file next to `path`, then rename it: a failed export leaves no half file."""
    rows = [row for episode in episodes for row in episode_rows(episode, folder)]
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            count = write_rows(rows, stream, fmt)
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    return count


class EpisodeList(QWidget):
    sig_open = Signal(str)            # an episode the user picked
    sig_status = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.model = QStandardItemModel(0, len(COLUMNS))
        self.model.setHorizontalHeaderLabels(list(COLUMNS))
        self.proxy = QSortFilterProxyModel()
        self.proxy.setSourceModel(self.model)
        self.proxy.setFilterKeyColumn(-1)  # hidden columns are searched too
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.table = self._build_table()
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("filter: task, agent, result, annotator…")
        self.next_unlabelled = QPushButton("Next unlabelled")
        self.agreement = QPushButton("Agreement…")
        self.export = QPushButton("Export labels…")
        self.cancel = QPushButton("Cancel")
        self.cancel.hide()
        self.folder_label = QLabel("No folder open (File → Open folder…)")
        self.folder_label.setWordWrap(True)
        self.folder_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        row = QHBoxLayout()
        row.addWidget(self.filter, 1)
        row.addWidget(self.next_unlabelled)
        tools = QHBoxLayout()
        for button in (self.agreement, self.export):
            tools.addWidget(button)
        tools.addStretch(1)
        tools.addWidget(self.cancel)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.folder_label)
        layout.addLayout(row)
        layout.addWidget(self.table, 1)
        layout.addLayout(tools)
        self.filter.textChanged.connect(self.proxy.setFilterFixedString)
        self.table.clicked.connect(self._clicked)      # one click opens an episode
        self.table.activated.connect(self._activated)  # so does Enter
        self.next_unlabelled.clicked.connect(self.open_next_unlabelled)
        self.agreement.clicked.connect(self.show_agreement)
        self.export.clicked.connect(self.choose_export)
        self.cancel.clicked.connect(self.cancel_work)
        for button in (self.agreement, self.export):
            button.setEnabled(False)
        self.reader = FolderReader("studio-folder")
        self.reader.sig_progress.connect(self._on_progress)
        self.reader.sig_done.connect(self._on_loaded)
        self.reader.sig_failed.connect(self._on_failed)
        self.exporter = FolderReader("studio-export")
        self.exporter.sig_progress.connect(self._on_export_progress)
        self.exporter.sig_done.connect(self._on_exported)
        self.exporter.sig_failed.connect(self._on_export_failed)
        self.folder: Path | None = None
        self.current: str | None = None
        self._export_target: Path | None = None

    def _build_table(self) -> QTableView:
        table = QTableView()
        table.setModel(self.proxy)
        table.setSortingEnabled(True)
        table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        table.setEditTriggers(QTableView.EditTrigger.NoEditTriggers)
        table.verticalHeader().hide()
        table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        table.setTextElideMode(Qt.TextElideMode.ElideRight)
        header = table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Stretch)  # the columns share the dock's width
        # ... except the task, the name one looks for: whole ("q08_s…gation" told nothing), the others give way
        header.setSectionResizeMode(COLUMNS.index("Task"), QHeaderView.ResizeMode.ResizeToContents)
        header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header.customContextMenuRequested.connect(self._choose_columns)
        for column, name in enumerate(COLUMNS):
            table.setColumnHidden(column, name not in SHOWN)
        return table

    @Slot(QPoint)
    def _choose_columns(self, where: QPoint) -> None:
        menu = QMenu(self)
        for column, name in enumerate(COLUMNS):
            action = menu.addAction(name)
            action.setCheckable(True)
            action.setChecked(not self.table.isColumnHidden(column))
            action.toggled.connect(lambda shown, c=column: self.table.setColumnHidden(c, not shown))
        menu.popup(self.table.horizontalHeader().mapToGlobal(where))

    # -- reading a folder ---------------------------------------------------------------------------
    def open_folder(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.folder_label.setText(f"Reading {folder}…")
        self.folder_label.setToolTip(str(folder))
        self.cancel.show()
        self.reader.start(self.folder)

    @Slot()
    def cancel_work(self) -> None:
        if self.exporter.request and self._export_target is not None:
            self.exporter.cancel()
            self.sig_status.emit(f"Export to {self._export_target} cancelled; nothing was written.")
            self._export_target = None
        self.reader.cancel()
        self.cancel.hide()
        if self.folder_label.text().startswith("Reading"):
            self.folder_label.setText(f"Reading {self.folder} was cancelled.")

    def shut_down(self) -> None:
        self.reader.shut_down()
        self.exporter.shut_down()

    @Slot(int, int, int)
    def _on_progress(self, request: int, done: int, total: int) -> None:
        if request == self.reader.request:
            self.folder_label.setText(f"Reading {self.folder}… {done} of {total} episodes")

    @Slot(int, str)
    def _on_failed(self, request: int, message: str) -> None:
        if request == self.reader.request:
            self.cancel.hide()
            self.folder_label.setText(f"Cannot read the folder: {message}")
            self.sig_status.emit(self.folder_label.text())

    @Slot(int, object, object)
    def _on_loaded(self, request: int, scan: FolderScan, _outcome: object) -> None:
        if request != self.reader.request:
            return  # an older folder finishing late: the newer one is (or will be) shown
        self.cancel.hide()
        self.model.removeRows(0, self.model.rowCount())
        for episode in scan.episodes:
            self.model.appendRow(self._row(episode))
        for damaged in scan.damaged:
            self.model.appendRow(self._damaged_row(damaged))
        unreadable = sum(e.labels_error is not None for e in scan.episodes)
        problems = [f"{len(scan.damaged)} damaged file(s) listed in red"] if scan.damaged else []
        problems += [f"{unreadable} with unreadable labels"] if unreadable else []
        count = f"{len(scan.episodes)} episode{'' if len(scan.episodes) == 1 else 's'}"
        self.folder_label.setText(f"{self.folder}: {count}"
                                  + (f"; {', '.join(problems)} (hover a row for the reason)" if problems else ""))
        for button in (self.agreement, self.export):
            button.setEnabled(bool(scan.episodes))
        self.sig_status.emit(self.folder_label.text())

    def _row(self, episode: EpisodeLabels) -> list[QStandardItem]:
        labels, labelled = label_status(episode)
        metadata = episode.metadata
        agent = metadata.get("agent")
        cells = {"Task": metadata.get("task_id", "?"), "Result": result_text(episode), "Labels": labels,
                 "Agent": agent.get("name", "?") if isinstance(agent, dict) else agent,
                 "Instructions": metadata.get("granularity", "?"), "Steps": episode.step_count,
                 "Category": metadata.get("category", "?"), "Episode": episode.path.name}
        tip = f"{episode.path}\n" + "\n".join(f"{name}: {value}" for name, value in cells.items())
        # Unreadable labels: only the Labels cell is red, the recording itself is fine.
        problem = str(episode.labels_error) if episode.labels_error is not None else ""
        return self._items(episode.path, cells, tip + (f"\n{problem}" if problem else ""), labelled,
                           damaged=bool(problem), red=("Labels",) if problem else ())

    def _damaged_row(self, error: EpisodeFileError) -> list[QStandardItem]:
        """A file that is not a readable episode: the reason where the task would be, read without scrolling."""
        cells: dict[str, object] = {"Task": damaged_text(error), "Result": "damaged", "Labels": "—", "Agent": "",
                                    "Instructions": "", "Steps": "", "Category": "", "Episode": error.path.name}
        return self._items(error.path, cells, str(error), False, damaged=True, red=COLUMNS)

    @staticmethod
    def _items(path: Path, cells: dict[str, object], tip: str, labelled: bool, damaged: bool,
               red: tuple[str, ...]) -> list[QStandardItem]:
        items = []
        for name in COLUMNS:
            item = QStandardItem()
            item.setData(cells[name], Qt.ItemDataRole.DisplayRole)
            item.setData(tip, Qt.ItemDataRole.ToolTipRole)
            item.setData(str(path), PATH_ROLE)
            item.setData(1 if labelled else 0, LABELLED_ROLE)  # an int: PySide6 mis-counts bools in roles
            item.setData(1 if damaged else 0, DAMAGED_ROLE)
            if name in red:
                item.setForeground(QBrush(DAMAGED_COLOUR))
            items.append(item)
        return items

    @property
    def rows(self) -> int:
        return self.proxy.rowCount()

    def path_at(self, row: int) -> str:
        return str(self.proxy.index(row, 0).data(PATH_ROLE))

    def mark_labelled(self, path: str, annotator: str) -> None:
        """Labels were saved for `path` by `annotator` in this session: update its row."""
        labels_column = COLUMNS.index("Labels")
        for row in range(self.model.rowCount()):
            if self.model.item(row, 0).data(PATH_ROLE) == path:
                for column in range(len(COLUMNS)):
                    self.model.item(row, column).setData(1, LABELLED_ROLE)
                cell = self.model.item(row, labels_column)
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

    # -- export ----------------------------------------------------------------------------------------
    @Slot()
    def choose_export(self) -> None:
        if self.folder is None:
            return
        chosen, selected = QFileDialog.getSaveFileName(self, "Export labels", str(self.folder / "labels.csv"),
                                                       ";;".join(EXPORT_FILTERS))
        if chosen:
            self.export_to(*export_path(chosen, selected))

    def export_to(self, path: Path, fmt: ExportFormat) -> None:
        """Every label in the folder, one row per span and per episode category (docs/labels-format.md).
        Reading every episode takes a while: it runs on a worker with progress (and Cancel), and
        sig_status reports the outcome."""
        assert self.folder is not None
        folder, target = self.folder, Path(path)
        self._export_target = target
        self.sig_status.emit(f"Exporting the labels of {folder}…")
        self.cancel.show()
        self.exporter.start(folder, lambda scan: write_export(scan.episodes, folder, target, fmt))

    @Slot(int, int, int)
    def _on_export_progress(self, request: int, done: int, total: int) -> None:
        if request == self.exporter.request:
            self.sig_status.emit(f"Exporting labels… {done} of {total} episodes read")

    @Slot(int, object, object)
    def _on_exported(self, request: int, scan: FolderScan, rows: object) -> None:
        if request != self.exporter.request or self._export_target is None:
            return
        target, self._export_target = self._export_target, None
        self.cancel.setVisible(self.folder_label.text().startswith("Reading"))
        skipped = (f"; left out {len(scan.warnings)} damaged file(s) or unreadable labels (the list says why)"
                   if scan.warnings else "")
        self.sig_status.emit(f"Exported {rows} label rows from {len(scan.episodes)} episodes to {target}{skipped}")

    @Slot(int, str)
    def _on_export_failed(self, request: int, message: str) -> None:
        if request == self.exporter.request and self._export_target is not None:
            target, self._export_target = self._export_target, None
            self.cancel.setVisible(self.folder_label.text().startswith("Reading"))
            self.sig_status.emit(f"Could not export labels to {target}: {message}")

    @Slot(object)
    def _clicked(self, index: QModelIndex) -> None:
        self.current = str(index.data(PATH_ROLE))
        self.sig_open.emit(self.current)

    @Slot(object)
    def _activated(self, index: QModelIndex) -> None:
        """Enter on the row the keyboard moved to (a double click also "activates": not opened twice)."""
        if str(index.data(PATH_ROLE)) != self.current:
            self._clicked(index)
