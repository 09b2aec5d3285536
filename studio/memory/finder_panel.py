"""The Memory tab's finder controls: find the position with progress and cancel, then make a
signature (in the units chosen here), verify it, save the profile (or open one) and try it; the
tried profile's trajectory is drawn. Laid out to fit a third of a 1280x720 window: buttons in a
grid, text that wraps, and lists and plots that give up height first."""

from __future__ import annotations

from typing import Literal

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QDoubleSpinBox,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
)

from core.finder.ranking import RankedTriple, turn_sign
from widgets.trajectory_plot import TrajectoryPlot


class FinderPanel(QGroupBox):
    sig_find = Signal()
    sig_cancel = Signal()
    sig_sign = Signal()
    sig_verify = Signal()
    sig_save = Signal()
    sig_open = Signal()
    sig_try = Signal()

    def __init__(self) -> None:
        super().__init__("Position, signature, profile")
        # The game's own profile's ground_turn, where it has one: a candidate turning the other way is marked.
        self.ground_turn: Literal["clockwise", "counterclockwise"] | None = None
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
        self.open_button = QPushButton("Open profile…")
        self.try_button = QPushButton("Try profile")
        self.scale = QDoubleSpinBox()
        self.scale.setDecimals(4)
        self.scale.setRange(0.0001, 10000.0)
        self.scale.setValue(1.0)
        self.scale.setToolTip("The profile reports stored value × this (Minetest keeps nodes × 10: 0.1)")
        self.units = QLineEdit()
        self.units.setPlaceholderText("units (m, nodes…)")
        self.signature = QLabel("Signature: none yet.")
        self.signature.setWordWrap(True)
        self.signature.setTextInteractionFlags(self.signature.textInteractionFlags()
                                               | Qt.TextInteractionFlag.TextSelectableByMouse)
        # A 96-byte pattern wraps to several lines: never let it widen the column.
        self.signature.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.trajectory = TrajectoryPlot()
        self.trajectory.setMinimumSize(200, 150)
        self.candidates.setMinimumHeight(60)
        top = QHBoxLayout()
        top.addWidget(self.find_button, 1)
        top.addWidget(self.cancel_button)
        units = QHBoxLayout()
        units.addWidget(QLabel("Profile scale"))
        units.addWidget(self.scale)
        units.addWidget(self.units, 1)
        actions = QGridLayout()
        for index, button in enumerate((self.sign_button, self.verify_button, self.save_button, self.open_button,
                                        self.try_button)):
            actions.addWidget(button, index // 3, index % 3)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addWidget(QLabel("Ranked candidates (x, y, z)"))
        layout.addWidget(self.candidates, 1)
        layout.addLayout(units)
        layout.addLayout(actions)
        layout.addWidget(self.signature)
        layout.addWidget(QLabel("Tried profile: the positions its evaluator read"))
        layout.addWidget(self.trajectory, 1)
        self.find_button.clicked.connect(self.sig_find)
        self.cancel_button.clicked.connect(self.sig_cancel)
        self.sign_button.clicked.connect(self.sig_sign)
        self.verify_button.clicked.connect(self.sig_verify)
        self.save_button.clicked.connect(self.sig_save)
        self.open_button.clicked.connect(self.sig_open)
        self.try_button.clicked.connect(self.sig_try)
        self.set_state(busy=False, found=False, built=False, saved=False)

    def set_state(self, busy: bool, found: bool, built: bool, saved: bool) -> None:
        """`saved`: a profile file is at hand (saved here or opened), to verify or try."""
        self.find_button.setEnabled(not busy)
        self.cancel_button.setEnabled(busy)
        self.sign_button.setEnabled(not busy and found)
        self.verify_button.setEnabled(not busy and (built or saved))
        self.save_button.setEnabled(not busy and built)
        self.open_button.setEnabled(not busy)
        self.try_button.setEnabled(not busy and saved)

    def set_units(self, scale: float, units: str | None) -> None:
        self.scale.setValue(scale)
        self.units.setText(units or "")

    def chosen_units(self) -> tuple[float, str | None]:
        return self.scale.value(), self.units.text().strip() or None

    def show_candidates(self, candidates: list[RankedTriple]) -> None:
        self.candidates.clear()
        for index, c in enumerate(candidates, 1):
            values = ", ".join(f"{v:.1f}" for v in c.values)
            mirrored = self._mirrored(c)
            # The mark first: a narrow list scrolls sideways rather than show a row's end
            item = QListWidgetItem(f"{index}. {'MIRRORED  ' if mirrored else ''}{c.address:#x}  ({values})  "
                                   f"{c.up} up  {c.score:.2f}")
            terms = ", ".join(f"{k} {v:.2f}" for k, v in c.terms.items())
            item.setToolTip(f"{c.address:#x}: ({', '.join(f'{v:.3f}' for v in c.values)}), {c.up} up\n"
                            f"score {c.score:.3f}, walking {c.speed:.2f} units/s, {c.copies} agreeing copies, "
                            f"lead {c.lead:.2f}\n{terms}"
                            + (f"\nMirrored: its ground axes turn the other way from the game's own profile "
                               f"(ground_turn {self.ground_turn}), most likely the position's values in the other "
                               "order (docs/finding-memory.md, section 5); a signature built from it reads x and "
                               "y swapped" if mirrored else ""))
            if mirrored:
                item.setForeground(QColor("#b45309"))
            self.candidates.addItem(item)
        if candidates:
            self.candidates.setCurrentRow(0)

    def _mirrored(self, candidate: RankedTriple) -> bool:
        """Whether the candidate's ground axes turn the other way from the game's own profile's (when it has one)."""
        sign = turn_sign(candidate.right_turn)
        return self.ground_turn is not None and sign != 0 and sign != (-1 if self.ground_turn == "clockwise" else 1)

    def show_progress(self, what: str, fraction: float, left: int) -> None:
        self.progress.setValue(int(fraction * 1000))
        self.status.setText(what + (f": {left:,} candidates left" if left else ""))
