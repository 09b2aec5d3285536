"""RecordingBar: where the current episode is being recorded, with buttons to open it in the
replay view or to show it in the file manager."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QUrl, Signal, Slot
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QWidget

from core.paths import RECORDINGS_DIR
from widgets.elided_label import ElidedLabel


class RecordingBar(QWidget):
    sig_open_in_replay = Signal(str)  # path of the episode file

    def __init__(self) -> None:
        super().__init__()
        # A long path must neither widen the window nor hide the file name: it is elided in the middle.
        self.label = ElidedLabel(f"Recording: on (every episode is written under {RECORDINGS_DIR})")
        self.open_button = QPushButton("Open in replay")
        self.folder_button = QPushButton("Show in folder")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 0, 4, 0)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.open_button)
        layout.addWidget(self.folder_button)
        self.open_button.clicked.connect(self._open)
        self.folder_button.clicked.connect(self._show_folder)
        self.path: Path | None = None
        self._set_enabled(False)

    def set_recording(self, path: str, finished: bool) -> None:
        self.path = Path(path)
        state = "recorded" if finished else "recording"
        self.label.set_full_text(f"Episode {state} to {path}")
        self._set_enabled(True)

    def _set_enabled(self, enabled: bool) -> None:
        self.open_button.setEnabled(enabled)
        self.folder_button.setEnabled(enabled)

    @Slot()
    def _open(self) -> None:
        if self.path is not None:
            self.sig_open_in_replay.emit(str(self.path))

    @Slot()
    def _show_folder(self) -> None:
        if self.path is not None:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.path.parent)))
