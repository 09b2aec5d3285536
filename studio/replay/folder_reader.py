"""FolderReader: a folder's episodes read on a worker thread, with progress, cancel, and newest-wins.

Reading every episode of a large run folder takes seconds. Each read is a numbered request; starting
a new one cancels the one in progress, and only the newest request's result is delivered, so a slow
folder can never overwrite a newer one. Results arrive as Qt signals, queued to bound slots in the
GUI thread. `job` (optional) runs on the worker with the episodes read, e.g. to write an export.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from core.labels.episodes import FolderScan, load_episode_labels
from core.recording.errors import EpisodeFileError
from studio.unexpected import unexpected

Job = Callable[[FolderScan], Any]


class Cancelled(Exception):
    """The request was cancelled or superseded."""


def read_episodes(folder: Path, progress: Callable[[int, int], None],
                  cancelled: Callable[[], bool]) -> FolderScan:
    """Every *.h5 file under `folder` (recursively, sorted): the episodes, and the files that are damaged
    (each with its reason; the rest of the folder reads as usual)."""
    paths = sorted(Path(folder).rglob("*.h5"))
    scan = FolderScan()
    for done, path in enumerate(paths, 1):
        if cancelled():
            raise Cancelled
        try:
            scan.episodes.append(load_episode_labels(path))
        except EpisodeFileError as exc:
            scan.damaged.append(exc)
        progress(done, len(paths))
    return scan


class FolderReader(QObject):
    sig_progress = Signal(int, int, int)     # request, episodes read so far, episodes in the folder
    sig_done = Signal(int, object, object)   # request, the FolderScan, what `job` returned
    sig_failed = Signal(int, str)            # request, what went wrong (for the user)

    def __init__(self, name: str) -> None:
        super().__init__()
        self._name = name
        self._lock = threading.Lock()
        self._request = 0
        self._threads: list[threading.Thread] = []

    @property
    def request(self) -> int:
        return self._request

    def start(self, folder: Path, job: Job | None = None) -> int:
        """Read `folder` (cancelling any read in progress); returns the request number."""
        with self._lock:
            self._request += 1
            request = self._request
            self._threads = [t for t in self._threads if t.is_alive()]
        thread = threading.Thread(target=self._run, args=(request, Path(folder), job), name=self._name, daemon=True)
        self._threads.append(thread)
        thread.start()
        return request

    def cancel(self) -> None:
        with self._lock:
            self._request += 1  # whatever runs is now stale: it stops at the next file

    def shut_down(self, timeout: float = 10.0) -> None:
        """Cancel and wait (bounded) for the worker: the application is closing."""
        self.cancel()
        for thread in self._threads:
            thread.join(timeout)

    def _stale(self, request: int) -> bool:
        return request != self._request

    def _run(self, request: int, folder: Path, job: Job | None) -> None:
        try:
            scan = read_episodes(folder, lambda done, total: self._progress(request, done, total),
                                 lambda: self._stale(request))
            outcome = job(scan) if job is not None and not self._stale(request) else None
        except Cancelled:
            return
        except OSError as exc:
            if not self._stale(request):
                self.sig_failed.emit(request, f"{folder}: {exc.strerror or exc}")
            return
        except Exception as exc:  # noqa: BLE001 - a bug must reach the user, not end a thread silently
            if not self._stale(request):
                self.sig_failed.emit(request, unexpected(f"reading the folder {folder}", exc))
            return
        if not self._stale(request):
            self.sig_done.emit(request, scan, outcome)

    def _progress(self, request: int, done: int, total: int) -> None:
        if not self._stale(request):
            self.sig_progress.emit(request, done, total)
