"""The progress display of `python main.py run`: one line per finished episode with a bar, the count of
episodes running and an ETA; on a terminal, a status line redrawn in place between them."""

from __future__ import annotations

import io
import os
import sys
import time
from typing import Any, TextIO

from core.session.batch_driver import BatchStatus

BAR_WIDTH = 24
REDRAW_S = 1.0
DEFAULT_COLUMNS = 100  # where the stream tells no terminal width


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


def bar(done: int, total: int) -> str:
    filled = round(BAR_WIDTH * done / total) if total else BAR_WIDTH
    return "[" + "#" * filled + "-" * (BAR_WIDTH - filled) + "]"


def verdict(row: dict[str, Any]) -> str:
    if row.get("success"):
        return f"success after {row.get('steps_used', '?')} steps"
    if row.get("end_reason") == "error":
        return f"infrastructure error, not a result: {str(row.get('error')).splitlines()[0]}"
    if row.get("end_reason") == "task_error":
        return f"broken task, not a result: {str(row.get('error')).splitlines()[0]}"
    return f"{row.get('end_reason', '?')} after {row.get('steps_used', '?')} steps"


class RunProgress:
    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdout
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.started = time.perf_counter()
        self.last: BatchStatus | None = None
        self._drawn_at = 0.0
        self._status_shown = False
        self._rows = 0

    def _clear(self) -> None:
        if self._status_shown:
            self.stream.write("\r\033[K")
            self._status_shown = False

    def episode(self, done: int, total: int, row: dict[str, Any]) -> None:
        """An episode has a row: print it, with where the run stands."""
        self._clear()
        self._rows += 1
        running = self.last.running if self.last is not None else 0
        elapsed = time.perf_counter() - self.started
        # The driver reports its status just before each row, with what the ETA needs (core/session/eta.py)
        eta = self.last.eta_s if self.last is not None and self.last.done == done else \
            BatchStatus(done, total, running, self._rows, elapsed).eta_s
        self.stream.write(f"{bar(done, total)} {done}/{total}  {row['key']}: {verdict(row)} ({elapsed:.0f} s; "
                          f"{running} running; ETA {duration(eta)})\n")
        self.stream.flush()

    def status(self, status: BatchStatus) -> None:
        """Several times a second: on a terminal, redraw the status line about once a second."""
        self.last = status
        now = time.perf_counter()
        if not self.tty or now - self._drawn_at < REDRAW_S:
            return
        self._drawn_at = now
        self._clear()
        line = (f"{bar(status.done, status.total)} {status.done}/{status.total} done, {status.running} running, "
                f"ETA {duration(status.eta_s)}")
        self.stream.write(line[:self._columns() - 1])  # a line that wraps could not be redrawn in place
        self.stream.flush()
        self._status_shown = True

    def _columns(self) -> int:
        try:
            return os.get_terminal_size(self.stream.fileno()).columns
        except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
            return DEFAULT_COLUMNS

    def close(self) -> None:
        self._clear()
        self.stream.flush()
