"""ClipExportJob: core.export.clip.export_clip on a worker thread, with progress and cancel.

The GUI thread only starts it and receives its signals (queued to the dialog's bound slots). Progress
is sent at most PROGRESS_HZ times a second, so a long clip never floods the event loop. Cancelling
sets an event the export checks between pictures; it then removes its temporary file.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from core.export import ExportCancelled, ExportError
from core.export.clip import ClipOptions, export_clip
from studio.unexpected import unexpected

PROGRESS_HZ = 20


class ClipExportJob(QObject):
    sig_progress = Signal(int, int)   # pictures done, pictures in all
    sig_done = Signal(object)         # the ClipResult
    sig_failed = Signal(str)          # what went wrong and what to do
    sig_cancelled = Signal(str)       # the export stopped on request; nothing was written

    def __init__(self) -> None:
        super().__init__()
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_progress = 0.0
        # Cleared before the last signal is sent, not when the thread ends: the dialog handles that signal while the
        # thread may still be finishing, and a click on Export right after it must start the next clip.
        self._busy = False

    @property
    def running(self) -> bool:
        return self._busy

    def start(self, episode: Path, steps: tuple[int, int], out: Path, options: ClipOptions) -> None:
        if self.running:
            raise RuntimeError("a clip is already being exported")
        self._cancel.clear()
        self._busy = True
        self._thread = threading.Thread(target=self._run, args=(episode, steps, out, options),
                                        name="studio-export-clip", daemon=True)
        self._thread.start()

    def cancel(self) -> None:
        self._cancel.set()

    def wait(self, timeout: float | None = None) -> bool:
        if self._thread is not None:
            self._thread.join(timeout)
        return self._thread is None or not self._thread.is_alive()

    def _progress(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done == total or now - self._last_progress >= 1 / PROGRESS_HZ:
            self._last_progress = now
            self.sig_progress.emit(done, total)

    def _run(self, episode: Path, steps: tuple[int, int], out: Path, options: ClipOptions) -> None:
        try:
            result = export_clip(episode, steps, out, options, self._progress, self._cancel)
        except ExportCancelled as exc:
            self._busy = False
            self.sig_cancelled.emit(str(exc))
        except ExportError as exc:
            self._busy = False
            self.sig_failed.emit(str(exc))
        except Exception as exc:  # noqa: BLE001 - a bug must reach the user, not die with the thread
            self._busy = False
            self.sig_failed.emit(unexpected(f"exporting a clip of {episode}", exc))
        else:
            self._busy = False
            self.sig_done.emit(result)
