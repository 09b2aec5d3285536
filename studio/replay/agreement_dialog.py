"""Label agreement for a folder: Cohen's kappa between two annotators, or an annotator and the
automatic suggestions, on the failure category and on deadlock steps. Read off the GUI thread."""

from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import QComboBox, QDialog, QFormLayout, QLabel, QPushButton, QVBoxLayout

from core.labels.agreement import category_agreement, step_agreement
from core.labels.episodes import EpisodeLabels, load_folder
from core.labels.model import AUTO_ANNOTATOR

AUTO_TEXT = "automatic suggestion"


def agreement_lines(episodes: list[EpisodeLabels], a: str, b: str) -> list[str]:
    return [f"Failure category: {category_agreement(episodes, a, b).describe()}",
            f"Deadlock steps, Aware / Unaware / none: {step_agreement(episodes, a, b, 'kind').describe()}",
            f"Deadlock steps, deadlock / none: {step_agreement(episodes, a, b, 'binary').describe()}"]


class AgreementDialog(QDialog):
    _sig_loaded = Signal(object, object)  # (episodes, warnings) from the reading thread

    def __init__(self, folder: Path, parent: object = None) -> None:
        super().__init__(parent)  # type: ignore[arg-type]
        self.setWindowTitle(f"Label agreement — {folder}")
        self.resize(640, 260)
        self.first, self.second = QComboBox(), QComboBox()
        self.compute = QPushButton("Compute")
        self.result = QLabel(f"Reading the labels in {folder}…")
        self.result.setWordWrap(True)
        form = QFormLayout()
        form.addRow("Annotator A", self.first)
        form.addRow("Annotator B", self.second)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.compute)
        layout.addWidget(self.result, 1)
        self.episodes: list[EpisodeLabels] = []
        self.compute.clicked.connect(self.show_agreement)
        self.compute.setEnabled(False)
        self._sig_loaded.connect(self._on_loaded)
        self._thread = threading.Thread(target=self._load, args=(folder,), name="studio-agreement", daemon=True)
        self._thread.start()

    def _load(self, folder: Path) -> None:
        episodes, warnings = load_folder(folder)
        self._sig_loaded.emit(episodes, warnings)

    @Slot(object, object)
    def _on_loaded(self, episodes: list[EpisodeLabels], warnings: list[str]) -> None:
        self.episodes = episodes
        names = sorted({name for e in episodes for name in e.document.annotators})
        for box in (self.first, self.second):
            box.addItems([*names, AUTO_TEXT])
        if len(names) >= 2:
            self.second.setCurrentIndex(1)
        else:
            self.second.setCurrentText(AUTO_TEXT)
        skipped = f" ({len(warnings)} damaged files or unreadable labels left out)" if warnings else ""
        self.result.setText(f"{len(episodes)} episodes, annotators: {', '.join(names) or 'none yet'}{skipped}.")
        self.compute.setEnabled(bool(episodes))
        if episodes:
            self.show_agreement()

    @Slot()
    def show_agreement(self) -> None:
        a, b = (AUTO_ANNOTATOR if box.currentText() == AUTO_TEXT else box.currentText()
                for box in (self.first, self.second))
        self.result.setText("\n".join([f"{self.first.currentText()} against {self.second.currentText()}:",
                                       *agreement_lines(self.episodes, a, b)]))

    def done(self, result: int) -> None:
        self._thread.join()
        super().done(result)
