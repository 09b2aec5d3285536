"""ResultsLoader: builds a run folder's report (it reads every episode file for human labels) off the GUI
thread. Each request runs in its own short-lived thread; the newest request wins and the view ignores
answers to older ones. `wait()` joins them (on close, and in tests).

A request may name the folder's signature from the last build (`since`): then the thread first looks at
results.jsonl and errors.jsonl (size and modification time) and rebuilds only if they changed, which is how
the view follows a run that is still filling without reading every episode file every few seconds."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from core.analysis.report import ReportError, build_report
from core.session.run_folder import ERRORS, RESULTS
from studio.unexpected import unexpected

Signature = tuple[tuple[int, int], ...]


def folder_signature(folder: Path) -> Signature:
    """What changes when a run writes a row: the two files' sizes and modification times (absent: -1)."""
    marks = []
    for name in (RESULTS, ERRORS):
        try:
            stat = os.stat(folder / name)
            marks.append((stat.st_size, stat.st_mtime_ns))
        except OSError:
            marks.append((-1, -1))
    return tuple(marks)


class ResultsLoader(QObject):
    sig_loaded = Signal(int, object)  # request number, the report (core.analysis.report.build_report)
    sig_failed = Signal(int, str)     # request number, what went wrong and what to do
    sig_unchanged = Signal(int)       # request number: the folder has no new rows since `since`

    def __init__(self) -> None:
        super().__init__()
        self.latest = 0
        self.signature: Signature | None = None  # of the folder as the last report built saw it
        self._threads: list[threading.Thread] = []

    def request(self, folder: Path, since: Signature | None = None) -> int:
        self.latest += 1
        thread = threading.Thread(target=self._build, args=(self.latest, folder, since), name="studio-results",
                                  daemon=True)
        self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()
        return self.latest

    @property
    def busy(self) -> bool:
        return any(t.is_alive() for t in self._threads)

    def wait(self, timeout_s: float = 30.0) -> None:
        for thread in self._threads:
            thread.join(timeout_s)
        self._threads = [t for t in self._threads if t.is_alive()]

    def _build(self, request: int, folder: Path, since: Signature | None) -> None:
        signature = folder_signature(folder)
        if since is not None and signature == since:
            self.sig_unchanged.emit(request)
            return
        if request == self.latest:
            self.signature = signature  # a failure too: following does not retry it until the folder changes
        try:
            report = build_report(folder)
        except ReportError as exc:
            self.sig_failed.emit(request, str(exc))
            return
        except Exception as exc:  # noqa: BLE001 - anything unforeseen is shown to the user, never lost
            self.sig_failed.emit(request, f"could not build the report for {folder} "
                                          f"({unexpected('building the Results report', exc)})")
            return
        self.sig_loaded.emit(request, report)
