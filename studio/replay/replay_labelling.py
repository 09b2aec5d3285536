"""Replay's deadlock labelling: the open episode's label session for the current annotator, and the keys and
buttons that edit the span at the cursor. The view owns the cursor and the episode; this owns the labels."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QSettings, Slot
from PySide6.QtWidgets import QInputDialog

from core.labels.model import SpanKind
from studio.replay.label_panel import LabelPanel
from studio.replay.label_session import LabelSession
from widgets.message_banner import MessageBanner

if TYPE_CHECKING:
    from studio.replay.replay_view import ReplayView


class ReplayLabelling(QObject):
    def __init__(self, view: ReplayView) -> None:
        super().__init__(view)
        self.view = view
        self.annotator = str(QSettings("PokeGym", "Studio").value("replay/annotator") or "")  # asked at the first label
        self.blocker = ""  # why labels cannot be saved into the open episode ("" when they can)
        self.session = LabelSession()
        self.panel = LabelPanel(self.session)
        self.panel.annotator.setText(self.annotator)
        self.banner = MessageBanner()  # said as the episode opens, before anyone starts labelling
        self.panel.sig_seek_step.connect(view.seek_step)
        self.panel.sig_annotator_changed.connect(self.set_annotator)
        self.panel.buttons["awareness"].clicked.connect(self.awareness_here)
        self.session.sig_changed.connect(self._labels_changed)
        self.session.sig_need_annotator.connect(self._ask_annotator)
        view.timeline.sig_span_clicked.connect(self.session.select)
        view.timeline.sig_span_edge_moved.connect(self._span_dragged)

    def key_handlers(self) -> dict[str, Any]:
        """The Replay keys that label (REPLAY_KEYS' names), each acting at the cursor."""
        session, view = self.session, self.view
        return {
            "next_candidate": lambda: self.jump_candidate(1), "previous_candidate": lambda: self.jump_candidate(-1),
            "span_start": lambda: session.mark_start(view.current_step),
            "span_end": lambda: session.mark_end(view.current_step),
            "aware": lambda: self._classify("aware"), "unaware": lambda: self._classify("unaware"),
            "accept": self._accept, "reject": session.reject_or_delete, "awareness_here": self.awareness_here,
            "split": self.split_here, "undo": session.undo, "redo": session.redo,
        }

    def open(self, blocker: str, labels: Any = None) -> None:
        """Open the labels of the view's episode for the current annotator (`labels`: read already on the open
        thread); say now, not at the first edit, if they cannot be saved (`blocker`)."""
        self.blocker = blocker
        episode = self.view.episode
        assert episode is not None and episode.path is not None  # read from a file
        result = episode.result.to_json() if episode.result else None
        self.session.open(episode.path, self.annotator, result, len(episode), not blocker, blocker, labels)
        if blocker:
            self.banner.show_message("warning", f"Labels can't be saved for this episode, so labelling is off: "
                                     f"{blocker}")
        else:
            self.banner.clear_message()

    def jump_candidate(self, direction: int) -> None:
        editor = self.session.editor
        if editor is None:
            return
        step = self.view.current_step
        target = editor.next_candidate(step) if direction > 0 else editor.previous_candidate(step)
        if target is not None:
            self.view.seek_step(target)
            self.session.select(editor.span_at(target))

    def _select_at_cursor(self) -> None:
        if self.session.editor is not None and self.session.selected is None:
            self.session.select(self.session.editor.span_at(self.view.current_step))

    def _classify(self, kind: SpanKind) -> None:
        self._select_at_cursor()
        self.session.set_kind(kind)

    def _accept(self) -> None:
        self._select_at_cursor()
        self.session.accept()

    @Slot()
    def awareness_here(self) -> None:
        self._select_at_cursor()
        self.session.awareness_here(self.view.current_step)

    @Slot()
    def split_here(self) -> None:
        self._select_at_cursor()
        self.session.split_at(self.view.current_step)

    @Slot(int, int, int)
    def _span_dragged(self, index: int, start: int, end: int) -> None:
        episode = self.view.episode
        if episode is not None:
            self.session.move_edges(index, episode.step(start).step, episode.step(end).step)

    @Slot()
    def _labels_changed(self) -> None:
        """Label edits reach every subscriber of the episode (the panes redraw the spans, keyed by step number)."""
        editor, episode = self.session.editor, self.view.episode
        if episode is None:
            return
        self.view.panes.selected_span = self.session.selected
        episode.labels_changed(list(editor.spans) if editor is not None else [])

    @Slot()
    def _ask_annotator(self) -> None:
        """The first label of a session with no name yet: ask for it rather than saving as nobody."""
        name, ok = QInputDialog.getText(self.view, "Annotator",
                                        "Labels are saved with the annotator's name.\nYour name:",
                                        text=os.environ.get("USER", ""))
        if ok and name.strip():
            self.set_annotator(name.strip())

    @Slot(str)
    def set_annotator(self, name: str) -> None:
        if self.panel.annotator.text() != name:
            self.panel.annotator.setText(name)
        if name == self.annotator:
            return
        self.annotator = name
        QSettings("PokeGym", "Studio").setValue("replay/annotator", name)
        if self.view.episode is not None:
            self.open(self.blocker)
