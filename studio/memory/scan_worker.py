"""Value scans and live candidate values for the Memory tab, off the GUI thread.

Scans run one at a time on a single worker thread. Live values are requested by a timer in the
GUI thread and served latest-wins: while one read is running, only the newest request is kept,
so a slow read never builds a queue. Results come back as signals, queued by Qt to the view's
bound slots.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
from PySide6.QtCore import QObject, Signal

from core.memory.readers import MemoryReader, open_reader
from core.memory.regions import MemoryAccessError
from core.memory.values import Condition, ScanValueError, value_type
from core.memory.valuescan import ValueScan
from studio.unexpected import unexpected

SHOWN = 200


class ScanWorker(QObject):
    sig_scanned = Signal(dict)   # {"count", "history", "rows": [(address, value)], "can_undo"}
    sig_values = Signal(dict)    # {"time", "values": {address: value or None}}
    sig_failed = Signal(str)     # a message for the user

    def __init__(self) -> None:
        super().__init__()
        self._jobs = ThreadPoolExecutor(max_workers=1, thread_name_prefix="studio-memory-scan")
        self._reads = ThreadPoolExecutor(max_workers=1, thread_name_prefix="studio-memory-read")
        self._lock = threading.Lock()
        self._reading = False
        self._pending: tuple[list[int], str] | None = None
        self._scan: ValueScan | None = None
        self._reader: MemoryReader | None = None
        self._pid: int | None = None
        self.history: list[str] = []

    # -- scans (GUI thread calls, worker thread runs) --------------------------------------------
    def first_scan(self, pid: int, type_name: str, aligned: bool, condition: Condition) -> None:
        self._jobs.submit(self._guard, self._first, pid, type_name, aligned, condition)

    def next_scan(self, condition: Condition) -> None:
        self._jobs.submit(self._guard, self._next, condition)

    def undo(self) -> None:
        self._jobs.submit(self._guard, self._undo)

    def _guard(self, job: Any, *args: Any) -> None:
        try:
            job(*args)
        except (ScanValueError, MemoryAccessError, ProcessLookupError, OSError) as exc:
            self.sig_failed.emit(str(exc) or "the game process has exited")
        except Exception as exc:  # noqa: BLE001 - a bug must not end in a future nobody reads: logged, and shown
            self.sig_failed.emit(unexpected("a memory scan", exc))

    def _first(self, pid: int, type_name: str, aligned: bool, condition: Condition) -> None:
        if self._scan is not None:
            self._scan.close()
        if self._pid != pid:
            if self._reader is not None:
                self._reader.close()
            self._reader, self._pid = open_reader(pid), pid
        assert self._reader is not None
        self._scan = ValueScan(self._reader, value_type(type_name), aligned=aligned)
        count = self._scan.first_scan(condition)
        self.history = [f"first scan: {condition.describe()} → {count}"]
        self._report()

    def _next(self, condition: Condition) -> None:
        if self._scan is None:
            raise ScanValueError("run a first scan first")
        count = self._scan.next_scan(condition)
        self.history.append(f"next scan: {condition.describe()} → {count}")
        self._report()

    def _undo(self) -> None:
        if self._scan is None:
            raise ScanValueError("nothing to undo")
        count = self._scan.undo()
        self.history.append(f"undo → {count}")
        self._report()

    def _report(self) -> None:
        assert self._scan is not None
        rows = list(self._scan.candidates(limit=SHOWN))
        self.sig_scanned.emit({"count": self._scan.count, "history": list(self.history), "rows": rows,
                               "can_undo": self._scan.previous is not None})

    # -- live values (latest wins) ---------------------------------------------------------------
    def request_values(self, addresses: list[int], type_name: str) -> None:
        """Read `addresses` now; while a read runs, only the newest request waits."""
        with self._lock:
            if self._reading:
                self._pending = (addresses, type_name)
                return
            self._reading = True
        self._reads.submit(self._read_values, addresses, type_name)

    def _read_values(self, addresses: list[int], type_name: str) -> None:
        while True:
            try:
                reader = self._reader
                if reader is not None and addresses:
                    dtype = value_type(type_name).dtype
                    values: dict[int, Any] = {}
                    for address in addresses:
                        data = reader.read(address, dtype.itemsize)
                        values[address] = np.frombuffer(data, dtype)[0].item() if len(data) == dtype.itemsize \
                            else None
                    self.sig_values.emit({"time": time.monotonic(), "values": values})
            except (MemoryAccessError, ProcessLookupError, OSError) as exc:
                self.sig_failed.emit(str(exc) or "the game process has exited")
            except Exception as exc:  # noqa: BLE001 - as in _guard
                self.sig_failed.emit(unexpected("reading the watched values", exc))
            with self._lock:
                if self._pending is None:
                    self._reading = False
                    return
                addresses, type_name = self._pending
                self._pending = None

    def close(self) -> None:
        self._jobs.shutdown(wait=True, cancel_futures=True)
        self._reads.shutdown(wait=True, cancel_futures=True)
        if self._scan is not None:
            self._scan.close()
        if self._reader is not None:
            self._reader.close()
