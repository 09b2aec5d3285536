"""ResultsLoader: builds a run folder's report (it reads every episode file for human labels) off the GUI
thread. Each request runs in its own short-lived thread; the newest request wins and the view ignores
answers to older ones. `wait()` joins them (on close, and in tests)."""

from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from core.session.report import ReportError, build_report


class ResultsLoader(QObject):
    sig_loaded = Signal(int, object)  # request number, the report (core.session.report.build_report)
    sig_failed = Signal(int, str)     # request number, what went wrong and what to do

    def __init__(self) -> None:
        super().__init__()
        self.latest = 0
        self._threads: list[threading.Thread] = []

    def request(self, folder: Path) -> int:
        self.latest += 1
        thread = threading.Thread(target=self._build, args=(self.latest, folder), name="studio-results", daemon=True)
        self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()
        return self.latest

    def wait(self, timeout_s: float = 30.0) -> None:
        for thread in self._threads:
            thread.join(timeout_s)
        self._threads = [t for t in self._threads if t.is_alive()]

    def _build(self, request: int, folder: Path) -> None:
        try:
            report = build_report(folder)
        except ReportError as exc:
            self.sig_failed.emit(request, str(exc))
            return
        except Exception as exc:  # noqa: BLE001 - anything unforeseen is shown to the user, never lost
            self.sig_failed.emit(request, f"could not build the report for {folder} ({type(exc).__name__}: {exc})")
            return
        self.sig_loaded.emit(request, report)
