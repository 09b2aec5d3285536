"""Settings → Replay keys…: remap every Replay view key."""

from __future__ import annotations

from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QKeySequenceEdit, QLabel, QVBoxLayout, QWidget

from studio.replay.keymap import REPLAY_KEYS, duplicates


class KeysDialog(QDialog):
    def __init__(self, keys: dict[str, QKeySequence], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Replay keys")
        form = QFormLayout()
        self.edits: dict[str, QKeySequenceEdit] = {}
        for name, (_, description) in REPLAY_KEYS.items():
            edit = QKeySequenceEdit(keys[name])
            self.edits[name] = edit
            form.addRow(QLabel(description), edit)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
                                   | QDialogButtonBox.StandardButton.RestoreDefaults)
        buttons.accepted.connect(self._check_and_accept)
        buttons.rejected.connect(self.reject)
        buttons.button(QDialogButtonBox.StandardButton.RestoreDefaults).clicked.connect(self.restore_defaults)
        layout = QVBoxLayout(self)
        self.problem = QLabel("")
        self.problem.setStyleSheet("color: #c62828")
        self.problem.setWordWrap(True)
        layout.addLayout(form)
        layout.addWidget(self.problem)
        layout.addWidget(buttons)

    def _check_and_accept(self) -> None:
        clashes = duplicates(self.keys())
        empty = [REPLAY_KEYS[name][1] for name, sequence in self.keys().items() if sequence.isEmpty()]
        if clashes or empty:
            self.problem.setText("; ".join([*(f"{c} share a key" for c in clashes),
                                            *(f"no key for {e}" for e in empty)]))
            return
        self.accept()

    def restore_defaults(self) -> None:
        for name, (default, _) in REPLAY_KEYS.items():
            self.edits[name].setKeySequence(QKeySequence(default))

    def keys(self) -> dict[str, QKeySequence]:
        return {name: edit.keySequence() for name, edit in self.edits.items()}
