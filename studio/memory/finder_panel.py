"""The Memory tab's finder controls: find the position with progress and cancel, then make a
signature, verify it, save the profile and try it; the tried profile's trajectory is drawn."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
)

from core.finder.ranking import RankedTriple
from widgets.trajectory_plot import TrajectoryPlot


class FinderPanel(QGroupBox):
    sig_find = Signal()
    sig_cancel = Signal()
    sig_sign = Signal()
    sig_verify = Signal()
    sig_save = Signal()
    sig_try = Signal()

    def __init__(self) -> None:
        super().__init__("Position, signature, profile")
        self.find_button = QPushButton("Find position automatically")
        self.cancel_button = QPushButton("Cancel")
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.status = QLabel("The finder walks the character itself: forward, back, strafes and camera turns.")
        self.status.setWordWrap(True)
        self.candidates = QListWidget()
        self.sign_button = QPushButton("Make signature")
        self.verify_button = QPushButton("Verify")
        self.save_button = QPushButton("Save profile…")
        self.try_button = QPushButton("Try profile")
        self.signature = QLabel("Signature: none yet.")
        self.signature.setWordWrap(True)
        self.signature.setTextInteractionFlags(self.signature.textInteractionFlags()
                                               | Qt.TextInteractionFlag.TextSelectableByMouse)
        self.trajectory = TrajectoryPlot()
        self.trajectory.setMinimumHeight(180)
        top = QHBoxLayout()
        top.addWidget(self.find_button, 1)
        top.addWidget(self.cancel_button)
        actions = QHBoxLayout()
        for button in (self.sign_button, self.verify_button, self.save_button, self.try_button):
            actions.addWidget(button)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addWidget(QLabel("Ranked candidates (x, y, z)"))
        layout.addWidget(self.candidates, 1)
        layout.addLayout(actions)
        layout.addWidget(self.signature)
        layout.addWidget(QLabel("Tried profile: the positions its evaluator read"))
        layout.addWidget(self.trajectory, 1)
        self.find_button.clicked.connect(self.sig_find)
        self.cancel_button.clicked.connect(self.sig_cancel)
        self.sign_button.clicked.connect(self.sig_sign)
        self.verify_button.clicked.connect(self.sig_verify)
        self.save_button.clicked.connect(self.sig_save)
        self.try_button.clicked.connect(self.sig_try)
        self.set_state(busy=False, found=False, built=False, saved=False)

    def set_state(self, busy: bool, found: bool, built: bool, saved: bool) -> None:
        self.find_button.setEnabled(not busy)
        self.cancel_button.setEnabled(busy)
        self.sign_button.setEnabled(not busy and found)
        self.verify_button.setEnabled(not busy and built)
        self.save_button.setEnabled(not busy and built)
        self.try_button.setEnabled(not busy and saved)

    def show_candidates(self, candidates: list[RankedTriple]) -> None:
        self.candidates.clear()
        for index, c in enumerate(candidates, 1):
            values = ", ".join(f"{v:.2f}" for v in c.values)
            self.candidates.addItem(f"{index}. {c.address:#x}  ({values})  {c.up} up  score {c.score:.2f}  "
                                    f"{c.speed:.1f}/s  {c.copies} copies")
        if candidates:
            self.candidates.setCurrentRow(0)

    def show_progress(self, what: str, fraction: float, left: int) -> None:
        self.progress.setValue(int(fraction * 1000))
        self.status.setText(what + (f": {left:,} candidates left" if left else ""))
