"""LabelSession: one annotator labelling one episode, with autosave off the GUI thread.

Every edit goes through core.labels' LabelEditor (undoable, Qt-free). A change restarts a short
debounce timer; when it fires, an immutable snapshot of the labels is written by a single worker
(the crash-safe slot store), and the editor is marked saved with exactly that snapshot. Switching
episodes queues the last save on the same worker and never waits for it; its outcome is reported
with the file's name. Labels whose save failed when no open editor held them (their episode or annotator
was switched) are kept, and saved again when that episode is opened again or the studio quits (`flush`,
which lets the window ask before quitting with any still unsaved).
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QObject, QTimer, Signal, Slot

from core.labels.model import AnnotatorLabels, LabelDocument, LabelEditor, SpanKind
from core.labels.store import LabelStoreError, read_labels, save_labels
from studio.unexpected import unexpected

AUTOSAVE_MS = 1200
NO_NAME = "(no name yet)"  # labels shown before the annotator has said who they are; never saved under it


class LabelSession(QObject):
    sig_changed = Signal()           # the labels or the selection changed: redraw
    sig_saved = Signal(str)          # time of the save (of the episode open now)
    sig_saved_file = Signal(str, str)  # file, annotator: any save that succeeded (also of an episode closed since)
    sig_error = Signal(str)          # a save or an edit was refused: say why
    sig_need_annotator = Signal()    # a first edit with no annotator name: the view asks for one (synchronously)
    _sig_save_done = Signal(str, object, str)  # (file, the snapshot, error or "") from the save worker

    def __init__(self) -> None:
        super().__init__()
        self.path: Path | None = None
        self.editor: LabelEditor | None = None
        self.selected: int | None = None
        self.pending_start: int | None = None
        self.read_only_reason = ""
        self.others: dict[str, AnnotatorLabels] = {}
        self._saver = ThreadPoolExecutor(max_workers=1, thread_name_prefix="studio-labels")
        self._saving: Future[None] | None = None
        self._queued: dict[tuple[str, str], AnnotatorLabels] = {}  # (file, annotator) -> labels being saved
        self._unsaved: dict[tuple[str, str], tuple[AnnotatorLabels, str]] = {}  # failed saves no editor holds
        self._open_error = ""  # why the open editor's last save failed; "" when it did not
        self._shut = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.save_soon_due)
        self._sig_save_done.connect(self._on_save_done)

    # -- opening and closing --------------------------------------------------------------------
    def open(self, path: Path, annotator: str, result: dict | None, step_count: int, writable: bool,
             read_only_reason: str = "", labels: LabelDocument | LabelStoreError | None = None) -> None:
        """`labels`: the file's labels read already (off the GUI thread), or the error reading them; None:
        read them here."""
        self.close()
        self.path, self.selected, self.pending_start = Path(path), None, None
        self.read_only_reason = "" if writable else read_only_reason
        try:
            if isinstance(labels, LabelStoreError):
                raise labels
            document = labels if labels is not None else read_labels(path)
        except LabelStoreError as exc:  # e.g. both stored copies damaged: unreadable, and never saved over
            self._unreadable(f"Labels unreadable: {exc}")
            return
        queued = self._queued.get((str(self.path), annotator))
        if queued is not None:  # saved a moment ago and still being written: that is what the file will hold
            document = document.with_annotator(queued)
        try:
            self.editor = LabelEditor.for_episode(annotator or NO_NAME, result, step_count, document)
        except (ValueError, TypeError, KeyError) as exc:  # the suggestions in /result are not what the runner writes
            self._unreadable(f"Labels unavailable: the automatic suggestions in {path}'s /result cannot be "
                             f"read ({exc})")
            return
        self.editor.on_change.append(self._edited)
        self.others = {name: labels for name, labels in document.annotators.items() if name != annotator}
        self._open_error = ""
        unsaved = self._unsaved.get((str(self.path), annotator))
        if self.read_only_reason:
            kept = (f" (labels of {annotator} that could not be saved earlier are still kept, to be saved once the "
                    "file can be written)") if unsaved is not None else ""
            self.sig_error.emit(f"Labels are read-only here: {self.read_only_reason}{kept}")
        elif unsaved is not None:
            del self._unsaved[(str(self.path), annotator)]  # the editor holds them now
            self.editor.resume_unsaved(unsaved[0])  # dirty again: the autosave tries once more
            self.sig_error.emit(f"Labels put back that were not saved before ({unsaved[1]}); saving them again")
        self.sig_changed.emit()

    def _unreadable(self, reason: str) -> None:
        self.editor, self.read_only_reason = None, reason
        self.sig_error.emit(reason)
        self.sig_changed.emit()

    def close(self) -> None:
        """Save what is unsaved, on the save worker after any save in progress; returns at once. Called
        when switching episodes and on exit."""
        self._timer.stop()
        edits = self._unsaved_edits()
        if edits is not None:
            self._submit(*edits)
        self.editor = None

    def flush(self, timeout: float = 30.0) -> list[str]:
        """Save what is unsaved, retrying closed episodes' failed saves (the cause may be fixed by now), and
        wait for every save; returns one line per file whose labels are still not on disk (empty when all
        are). The session stays usable: the window may decide not to close."""
        if self._shut:
            return []
        self._timer.stop()
        edits = self._unsaved_edits()
        if edits is not None:
            self._submit(*edits)
        for (path, _), (snapshot, _) in list(self._unsaved.items()):
            self._submit(Path(path), snapshot)
        if self._saving is not None:
            wait([self._saving], timeout)  # the worker saves in order: the last one submitted ends last
        QCoreApplication.sendPostedEvents(self)  # deliver the save worker's outcomes to _on_save_done
        lost = [f"{Path(path).name} ({annotator}): {error}" for (path, annotator), (_, error) in self._unsaved.items()]
        edits = self._unsaved_edits()
        if edits is not None:
            lost.append(f"{edits[0].name} ({edits[1].annotator}): {self._open_error or 'not saved yet'}")
        return lost

    def shut_down(self, timeout: float = 30.0) -> None:
        """The application is closing: the last save is written before the worker stops (a bounded wait:
        a disk that hangs must not hang the studio's exit)."""
        if self._shut:
            return
        self.close()
        self._shut = True
        if self._saving is not None:
            wait([self._saving], timeout)
        self._saver.shutdown(wait=False)

    def _unsaved_edits(self) -> tuple[Path, AnnotatorLabels] | None:
        """The open episode and its editor's labels when they hold edits not on disk that may be saved."""
        if self.editor is None or not self.editor.dirty or self.read_only_reason or self.path is None:
            return None
        return self.path, self.editor.labels

    @property
    def editable(self) -> bool:
        return self.editor is not None and not self.read_only_reason

    # -- autosave --------------------------------------------------------------------------------
    def _edited(self) -> None:
        if self.editor is not None and self.selected is not None and self.selected >= len(self.editor.spans):
            self.selected = None  # an undo removed the selected span
        if self.editor is not None and self.editor.dirty and self.editable:
            self._timer.start(AUTOSAVE_MS)
        self.sig_changed.emit()

    @Slot()
    def save_soon_due(self) -> None:
        if self.editor is None or not self.editor.dirty or self.path is None:
            return
        if self._saving is not None and not self._saving.done():
            self._timer.start(AUTOSAVE_MS)  # one save at a time; try again shortly
            return
        self._submit(self.path, self.editor.labels)

    def _submit(self, path: Path, snapshot: AnnotatorLabels) -> None:
        self._queued[(str(path), snapshot.annotator)] = snapshot
        self._saving = self._saver.submit(self._save, path, snapshot)

    def _save(self, path: Path, snapshot: AnnotatorLabels) -> None:
        try:
            save_labels(path, snapshot)
        except LabelStoreError as exc:
            self._sig_save_done.emit(str(path), snapshot, str(exc))
            return
        except OSError as exc:  # disk full, file gone: say so; the labels stay in memory and unsaved
            self._sig_save_done.emit(str(path), snapshot, f"{path}: {exc.strerror or exc}")
            return
        except Exception as exc:  # noqa: BLE001 - a bug: logged with its traceback; the labels stay unsaved and kept
            self._sig_save_done.emit(str(path), snapshot, unexpected(f"saving the labels of {path}", exc))
            return
        self._sig_save_done.emit(str(path), snapshot, "")

    @Slot(str, object, str)
    def _on_save_done(self, path: str, snapshot: AnnotatorLabels, error: str) -> None:
        key = (path, snapshot.annotator)
        if self._queued.get(key) is snapshot:
            del self._queued[key]  # on disk now (or failed): the file is the truth again
        if not error:
            self._unsaved.pop(key, None)
            self.sig_saved_file.emit(path, snapshot.annotator)
        held = (self.path is not None and Path(path) == self.path and self.editor is not None
                and snapshot.annotator == self.editor.labels.annotator)
        if not held:
            if error:  # closed meanwhile, or another annotator's: say which file, since it is not on screen
                self._unsaved[key] = (snapshot, error)
                self.sig_error.emit(f"Labels of {Path(path).name} by {snapshot.annotator} not saved: {error}. They "
                                    "are kept: open that episode again, or quit, to save them")
            return
        assert self.editor is not None
        if error:
            self._open_error = error
            if not self.editor.dirty:  # counted as written (reopened while this save was queued): it was not
                self.editor.mark_save_failed()
            self.sig_error.emit(f"Labels not saved (they are kept here; edit again to retry): {error}")
            return
        self._open_error = ""
        self.editor.mark_saved(snapshot)
        self.sig_saved.emit(snapshot.updated)

    # -- edits (each one undoable call on the editor) ------------------------------------------------
    def _do(self, action: str, *args: object) -> None:
        if self.editor is None:
            return
        if self.read_only_reason:
            self.sig_error.emit(f"Labels are read-only here: {self.read_only_reason}")
            return
        if self.editor.labels.annotator == NO_NAME:
            self.sig_need_annotator.emit()  # the view asks, and reopens the labels under that name
            if self.editor is None or self.editor.labels.annotator == NO_NAME:
                self.sig_error.emit("Labels are saved with the annotator's name: enter yours in the Annotator field.")
                return
        try:
            getattr(self.editor, action)(*args)
        except (ValueError, IndexError) as exc:
            self.sig_error.emit(str(exc))

    def select(self, index: int | None) -> None:
        self.selected = index
        self.sig_changed.emit()

    def mark_start(self, step: int) -> None:
        self.pending_start = step
        self.sig_changed.emit()

    def mark_end(self, step: int) -> None:
        if self.editor is None:
            return
        start = self.pending_start if self.pending_start is not None else step
        start, end = min(start, step), max(start, step)
        self.pending_start = None
        self._do("add_span", start, end)
        self.selected = self.editor.span_at(start)
        self.sig_changed.emit()

    def set_kind(self, kind: SpanKind) -> None:
        if self.selected is not None:
            self._do("set_kind", self.selected, kind)

    def accept(self) -> None:
        if self.selected is not None and self.editor is not None and self.editor.spans[self.selected].pending:
            self._do("accept_suggestion", self.selected)

    def reject_or_delete(self) -> None:
        if self.selected is None or self.editor is None:
            return
        pending = self.editor.spans[self.selected].pending
        self._do("reject_suggestion" if pending else "delete_span", self.selected)
        self.selected = None
        self.sig_changed.emit()

    def split_at(self, step: int) -> None:
        """Split the selected span so that `step` starts the second part (e.g. where awareness begins)."""
        if self.selected is not None and self.editor is not None:
            self._do("split_span", self.selected, step)
            self.selected = self.editor.span_at(step)
            self.sig_changed.emit()

    def awareness_here(self, step: int) -> None:
        if self.selected is not None:
            self._do("set_awareness_step", self.selected, step)

    def set_note(self, note: str) -> None:
        if self.selected is not None and self.editor is not None and self.editor.spans[self.selected].note != note:
            self._do("set_note", self.selected, note)

    def move_edges(self, index: int, start: int, end: int) -> None:
        self.selected = index
        self._do("set_edge", index, start, end)

    def set_category(self, category: str) -> None:
        self._do("set_failure_category", category)

    def confirm_category(self) -> None:
        self._do("confirm_failure_category")

    def undo(self) -> None:
        if self.editor is not None and self.editable:
            self.editor.undo()

    def redo(self) -> None:
        if self.editor is not None and self.editable:
            self.editor.redo()
