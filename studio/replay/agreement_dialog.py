"""Label agreement for a folder: Cohen's kappa between two annotators, or an annotator and the
automatic suggestions, on the failure category and on deadlock steps. The folder is read on a worker
with progress; closing the dialog cancels the read and never waits for it."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Slot
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.labels.agreement import category_agreement, step_agreement
from core.labels.episodes import EpisodeLabels, FolderScan
from core.labels.model import AUTO_ANNOTATOR
from studio.replay.folder_reader import FolderReader

AUTO_TEXT = "automatic suggestion"


def agreement_lines(episodes: list[EpisodeLabels], a: str, b: str) -> list[str]:
    return [f"Failure category: {category_agreement(episodes, a, b).describe()}",
            f"Deadlock steps, Aware / Unaware / none: {step_agreement(episodes, a, b, 'kind').describe()}",
            f"Deadlock steps, deadlock / none: {step_agreement(episodes, a, b, 'binary').describe()}"]


class AgreementDialog(QDialog):
    def __init__(self, folder: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Label agreement — {folder}")
        self.resize(640, 260)
        self.first, self.second = QComboBox(), QComboBox()
        self.compute = QPushButton("Compute")
        self.summary = QLabel(f"Reading the labels in {folder}…")
        self.summary.setWordWrap(True)
        form = QFormLayout()
        form.addRow("Annotator A", self.first)
        form.addRow("Annotator B", self.second)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.compute)
        layout.addWidget(self.summary, 1)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)  # closing cancels the read
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.episodes: list[EpisodeLabels] = []
        self.compute.clicked.connect(self.show_agreement)
        self.compute.setEnabled(False)
        self.reader = FolderReader("studio-agreement")
        self.reader.sig_progress.connect(self._on_progress)
        self.reader.sig_done.connect(self._on_loaded)
        self.reader.sig_failed.connect(self._on_failed)
        self.folder = Path(folder)
        self.reader.start(self.folder)

    @Slot(int, int, int)
    def _on_progress(self, _request: int, done: int, total: int) -> None:
        self.summary.setText(f"Reading the labels in {self.folder}… {done} of {total} episodes")

    @Slot(int, str)
    def _on_failed(self, _request: int, message: str) -> None:
        self.summary.setText(f"Cannot read the folder: {message}")

    @Slot(int, object, object)
    def _on_loaded(self, request: int, scan: FolderScan, _outcome: object) -> None:
        if request != self.reader.request:
            return
        episodes = self.episodes = scan.episodes
        names = sorted({name for e in episodes for name in e.document.annotators})
        for box in (self.first, self.second):
            box.addItems([*names, AUTO_TEXT])
        if len(names) >= 2:
            self.second.setCurrentIndex(1)
        else:
            self.second.setCurrentText(AUTO_TEXT)
        warnings = scan.warnings
        skipped = f" ({len(warnings)} damaged files or unreadable labels left out)" if warnings else ""
        self.summary.setText(f"{len(episodes)} episodes, annotators: {', '.join(names) or 'none yet'}{skipped}.")
        self.compute.setEnabled(bool(episodes))
        if episodes:
            self.show_agreement()

    @Slot()
    def show_agreement(self) -> None:
        a, b = (AUTO_ANNOTATOR if box.currentText() == AUTO_TEXT else box.currentText()
                for box in (self.first, self.second))
        self.summary.setText("\n".join([f"{self.first.currentText()} against {self.second.currentText()}:",
                                       *agreement_lines(self.episodes, a, b)]))

    def done(self, result: int) -> None:
        self.reader.cancel()  # a read in progress stops at its next file; nothing waits for it
        super().done(result)
