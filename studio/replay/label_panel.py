"""LabelPanel: the annotator, the episode's failure category, the list of deadlock spans and the
buttons that label them. It shows the LabelSession and turns clicks into one call on it."""

from __future__ import annotations

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.episode.metrics import CATEGORIES
from core.labels.model import DeadlockLabel
from studio.replay.label_session import LabelSession


def describe_span(span: DeadlockLabel) -> str:
    kind = {"aware": "Aware", "unaware": "Unaware"}.get(span.kind or "", "unclassified")
    origin = "suggested, pending" if span.pending else ("rejected" if span.status == "rejected" else span.origin)
    awareness = f", aware from {span.awareness_step}" if span.awareness_step is not None else ""
    note = f" — {span.note}" if span.note else ""
    return f"steps {span.start}–{span.end}: {kind} ({origin}{awareness}){note}"


class LabelPanel(QWidget):
    sig_annotator_changed = Signal(str)
    sig_seek_step = Signal(int)  # a span was picked in the list: go to its start

    def __init__(self, session: LabelSession) -> None:
        super().__init__()
        self.session = session
        self.annotator = QLineEdit()
        self.annotator.setPlaceholderText("your name (saved with each label)")
        self.category = QComboBox()
        self.category.addItems(list(CATEGORIES))
        self.category_state = QLabel("")
        self.category_state.setWordWrap(True)  # a long reason (unreadable labels) must not widen the dock
        self.confirm = QPushButton("Confirm category")
        self.spans = QListWidget()
        self.note = QLineEdit()
        self.note.setPlaceholderText("note on the selected span (Enter to save)")
        self.status = QLabel("")
        self.status.setWordWrap(True)
        self.others = QLabel("")
        self.others.setWordWrap(True)
        self.buttons: dict[str, QPushButton] = {}
        grid = QGridLayout()
        for position, (name, text) in enumerate((("accept", "Accept"), ("reject", "Reject / delete"),
                                                 ("aware", "Aware (A)"), ("unaware", "Unaware (U)"),
                                                 ("awareness", "Aware from here (W)"), ("undo", "Undo"),
                                                 ("redo", "Redo"))):
            button = QPushButton(text)
            self.buttons[name] = button
            grid.addWidget(button, position // 3, position % 3)
        layout = QVBoxLayout(self)
        row = QHBoxLayout()
        row.addWidget(QLabel("Annotator"))
        row.addWidget(self.annotator, 1)
        layout.addLayout(row)
        row = QHBoxLayout()
        row.addWidget(QLabel("Failure category"))
        row.addWidget(self.category, 1)
        row.addWidget(self.confirm)
        layout.addLayout(row)
        layout.addWidget(self.category_state)
        hint = QLabel("Deadlock spans ([ and ] at the cursor add one; drag edges on the timeline)")
        hint.setWordWrap(True)
        layout.addWidget(hint)
        layout.addWidget(self.spans, 1)
        layout.addWidget(self.note)
        layout.addLayout(grid)
        layout.addWidget(self.others)
        layout.addWidget(self.status)
        self.annotator.editingFinished.connect(self._annotator_done)
        self.category.activated.connect(self._category_chosen)
        self.confirm.clicked.connect(session.confirm_category)
        self.spans.currentRowChanged.connect(self._row_chosen)
        self.note.editingFinished.connect(self._note_done)
        self._note_for: tuple[int, int] | None = None  # (span index, start) the note field shows
        self.buttons["accept"].clicked.connect(session.accept)
        self.buttons["reject"].clicked.connect(session.reject_or_delete)
        self.buttons["aware"].clicked.connect(lambda: session.set_kind("aware"))
        self.buttons["unaware"].clicked.connect(lambda: session.set_kind("unaware"))
        self.buttons["undo"].clicked.connect(session.undo)
        self.buttons["redo"].clicked.connect(session.redo)
        session.sig_changed.connect(self.refresh)
        session.sig_saved.connect(lambda when: self.status.setText(f"All labels saved ({when})."))
        session.sig_error.connect(lambda message: self.status.setText(f"⚠ {message}"))
        self.refresh()

    @Slot()
    def refresh(self) -> None:
        editor = self.session.editor
        enabled = self.session.editable
        for widget in (self.category, self.confirm, self.spans, self.note, *self.buttons.values()):
            widget.setEnabled(enabled)
        if editor is None:
            self.spans.clear()
            self.category_state.setText(self.session.read_only_reason or "No episode open.")
            return
        labels = editor.labels
        self.category.setCurrentText(labels.failure_category or "")
        confirmed = "confirmed" if labels.category_confirmed else "suggested automatically — confirm or change it"
        self.category_state.setText(f"{labels.failure_category or 'no category'} ({confirmed})")
        self.spans.blockSignals(True)
        self.spans.clear()
        self.spans.addItems([describe_span(span) for span in labels.spans])
        if self.session.selected is not None:
            self.spans.setCurrentRow(self.session.selected)
        self.spans.blockSignals(False)
        index = self.session.selected
        selected = editor.spans[index] if index is not None else None
        shown_for = (index, selected.start) if index is not None and selected is not None else None
        if shown_for != self._note_for or not self.note.hasFocus():
            self._note_for = shown_for  # never overwrite what the user is typing (autosave refreshes too)
            if self.note.text() != (selected.note if selected else ""):
                self.note.setText(selected.note if selected else "")
        self.buttons["accept"].setEnabled(enabled and bool(selected and selected.pending))
        self.buttons["undo"].setEnabled(enabled and editor.can_undo)
        self.buttons["undo"].setToolTip(editor.undo_text)
        self.buttons["redo"].setEnabled(enabled and editor.can_redo)
        self.buttons["redo"].setToolTip(editor.redo_text)
        if editor.dirty:
            self.status.setText("Unsaved changes (autosaving)…")
        if self.session.pending_start is not None:
            self.status.setText(f"Span starts at step {self.session.pending_start}; press ] at its last step.")
        others = [f"{name}: {len(labels.spans)} spans, {labels.failure_category or '-'}"
                  for name, labels in self.session.others.items()]
        self.others.setText("Other annotators — " + "; ".join(others) if others else "")

    @Slot()
    def _annotator_done(self) -> None:
        name = self.annotator.text().strip()
        if name:
            self.sig_annotator_changed.emit(name)

    @Slot(int)
    def _category_chosen(self, index: int) -> None:
        self.session.set_category(self.category.itemText(index))

    @Slot(int)
    def _row_chosen(self, row: int) -> None:
        self.session.select(row if row >= 0 else None)
        editor = self.session.editor
        if editor is not None and 0 <= row < len(editor.spans):
            self.sig_seek_step.emit(editor.spans[row].start)

    @Slot()
    def _note_done(self) -> None:
        self.session.set_note(self.note.text())
