"""The Memory tab's value-scan controls: first scan, next scan, undo. They only build conditions;
the view hands them to the scan worker."""

from __future__ import annotations

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
)

from core.memory.values import NEXT_OPS, TYPE_NAMES, Condition, ScanValueError, typed_tolerance, value_type

FIRST = (("exact value", "exact"), ("range", "range"), ("unknown initial value", "unknown"))
NEEDS_VALUE = {"exact", "range", "equal", "between", "increased_by", "decreased_by"}
NEEDS_UPPER = {"range", "between"}
RELATIVE = {"changed", "unchanged", "increased", "decreased", "increased_by", "decreased_by"}


class ScanPanel(QGroupBox):
    sig_first = Signal(str, bool, object)   # type name, aligned, Condition
    sig_next = Signal(object)               # Condition
    sig_undo = Signal()

    def __init__(self) -> None:
        super().__init__("Value scan (read-only)")
        self.type = QComboBox()
        self.type.addItems(TYPE_NAMES)
        self.aligned = QCheckBox("aligned")
        self.aligned.setChecked(True)
        self.first_kind = QComboBox()
        for text, kind in FIRST:
            self.first_kind.addItem(text, kind)
        self.first_value, self.first_upper = QLineEdit(), QLineEdit()
        self.first_value.setPlaceholderText("value")
        self.first_upper.setPlaceholderText("upper bound")
        self.first_button = QPushButton("First scan")
        self.next_op = QComboBox()
        for op in NEXT_OPS:
            self.next_op.addItem(op.replace("_", " "), op)
        self.next_value, self.next_upper, self.tolerance = QLineEdit(), QLineEdit(), QLineEdit()
        self.next_value.setPlaceholderText("value")
        self.next_upper.setPlaceholderText("upper bound")
        self.tolerance.setPlaceholderText("tolerance (optional)")
        self.against_first = QCheckBox("against the first scan")
        self.next_button = QPushButton("Next scan")
        self.undo_button = QPushButton("Undo")
        self.status = QLabel("No scan yet.")
        self.status.setWordWrap(True)
        form = QFormLayout()
        row = QHBoxLayout()
        row.addWidget(self.type)
        row.addWidget(self.aligned)
        form.addRow("Type", row)
        form.addRow("First", self.first_kind)
        form.addRow("", self.first_value)
        form.addRow("", self.first_upper)
        form.addRow("", self.first_button)
        form.addRow("Next", self.next_op)
        form.addRow("", self.next_value)
        form.addRow("", self.next_upper)
        form.addRow("", self.tolerance)
        form.addRow("", self.against_first)
        buttons = QHBoxLayout()
        buttons.addWidget(self.next_button)
        buttons.addWidget(self.undo_button)
        form.addRow("", buttons)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.status)
        layout.addStretch(1)
        self.first_kind.currentIndexChanged.connect(self._update_fields)
        self.next_op.currentIndexChanged.connect(self._update_fields)
        self.first_button.clicked.connect(self.request_first)
        self.next_button.clicked.connect(self.request_next)
        self.undo_button.clicked.connect(self.sig_undo)
        self.set_scanned(False, False)
        self._update_fields()

    @Slot()
    def _update_fields(self) -> None:
        kind, op = self.first_kind.currentData(), self.next_op.currentData()
        self.first_value.setVisible(kind in NEEDS_VALUE)
        self.first_upper.setVisible(kind in NEEDS_UPPER)
        self.next_value.setVisible(op in NEEDS_VALUE)
        self.next_upper.setVisible(op in NEEDS_UPPER)
        self.tolerance.setVisible(op in {"equal", "increased_by", "decreased_by"})
        self.against_first.setEnabled(op in RELATIVE)

    def set_scanned(self, scanned: bool, can_undo: bool) -> None:
        """After a scan (or before any): which buttons make sense now."""
        self.first_button.setEnabled(True)
        self.next_button.setEnabled(scanned)
        self.undo_button.setEnabled(can_undo)

    def set_busy(self) -> None:
        for button in (self.first_button, self.next_button, self.undo_button):
            button.setEnabled(False)

    def show_error(self, message: str) -> None:
        self.status.setText(f"<span style='color:#b00'>{message}</span>")

    @Slot()
    def request_first(self) -> None:
        vtype = value_type(self.type.currentText())
        kind = self.first_kind.currentData()
        try:
            if kind == "unknown":
                condition = Condition("unknown")
            elif kind == "range":
                low, high = vtype.parse(self.first_value.text()), vtype.parse(self.first_upper.text())
                condition = Condition("range", low, high)
            else:
                text = self.first_value.text()
                condition = Condition("exact", vtype.parse(text), tolerance=typed_tolerance(text) if vtype.is_float
                                      else 0.0)
        except ScanValueError as exc:
            self.show_error(str(exc))
            return
        self.status.setText("Scanning…")
        self.set_busy()
        self.sig_first.emit(vtype.name, self.aligned.isChecked(), condition)

    @Slot()
    def request_next(self) -> None:
        vtype = value_type(self.type.currentText())
        op = self.next_op.currentData()
        try:
            value = vtype.parse(self.next_value.text()) if op in NEEDS_VALUE else None
            upper = vtype.parse(self.next_upper.text()) if op in NEEDS_UPPER else None
            tolerance_text = self.tolerance.text().strip()
            tolerance = float(tolerance_text) if tolerance_text else (
                typed_tolerance(self.next_value.text()) if vtype.is_float and op == "equal" else 0.0)
        except (ScanValueError, ValueError) as exc:
            self.show_error(str(exc))
            return
        self.status.setText("Scanning…")
        self.set_busy()
        self.sig_next.emit(Condition(op, value, upper, tolerance,
                                     self.against_first.isChecked() and op in RELATIVE))
