"""EpisodeList: a folder of episodes as a sortable, filterable table with task, agent, result and
label status, and "next unlabelled". The folder is read in a worker thread."""

from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtCore import QSortFilterProxyModel, Qt, Signal, Slot
from PySide6.QtGui import QStandardItem, QStandardItemModel
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

from core.labels.episodes import EpisodeLabels, load_folder
from core.labels.export import export_labels
from studio.replay.agreement_dialog import AgreementDialog

COLUMNS = ("Episode", "Task", "Category", "Instructions", "Agent", "Result", "Steps", "Labels")
PATH_ROLE = Qt.ItemDataRole.UserRole + 1
LABELLED_ROLE = Qt.ItemDataRole.UserRole + 2


def label_status(episode: EpisodeLabels) -> tuple[str, bool]:
    """Text for the Labels column, and whether any human confirmed a category or labelled a span."""
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
        return "success"
    return f"{result.get('end_reason')} · {result.get('failure_category_suggestion') or ''}".strip(" ·")


class EpisodeList(QWidget):
    sig_open = Signal(str)            # an episode the user picked
    sig_status = Signal(str)
    _sig_loaded = Signal(object, object)  # (episodes, warnings) from the folder thread

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
        episodes, warnings = load_folder(folder)
        self._sig_loaded.emit(episodes, warnings)

    @Slot(object, object)
    def _on_loaded(self, episodes: list[EpisodeLabels], warnings: list[str]) -> None:
        self.model.removeRows(0, self.model.rowCount())
        for episode in episodes:
            labels, labelled = label_status(episode)
            metadata = episode.metadata
            agent = metadata.get("agent")
            cells = [episode.path.name, metadata.get("task_id", "?"), metadata.get("category", "?"),
                     metadata.get("granularity", "?"), agent.get("name", "?") if isinstance(agent, dict) else agent,
                     result_text(episode), episode.step_count, labels]
            items = []
            for value in cells:
                item = QStandardItem()
                item.setData(value, Qt.ItemDataRole.DisplayRole)
                item.setData(str(episode.path), PATH_ROLE)
                item.setData(1 if labelled else 0, LABELLED_ROLE)  # an int: PySide6 mis-counts bools in roles
                items.append(item)
            self.model.appendRow(items)
        self.table.resizeColumnsToContents()
        skipped = f"; {len(warnings)} file(s) skipped (unreadable): " + "; ".join(warnings[:3]) if warnings else ""
        self.folder_label.setText(f"{self.folder}: {len(episodes)} episodes{skipped}")
        for button in (self.agreement, self.export):
            button.setEnabled(bool(episodes))
        self.sig_status.emit(self.folder_label.text())

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
            if not self.proxy.index(row, 0).data(LABELLED_ROLE) and self.path_at(row) != self.current:
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
        skipped = f"; {len(result.warnings)} unreadable files skipped" if result.warnings else ""
        self.sig_status.emit(f"Exported {result.rows} label rows from {result.episodes} episodes to {path}{skipped}")

    @Slot(object)
    def _activated(self, index: object) -> None:
        self.current = str(index.data(PATH_ROLE))  # type: ignore[attr-defined]
        self.sig_open.emit(self.current)
