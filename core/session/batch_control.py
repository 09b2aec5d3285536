"""Stopping a batch run from another thread: the CLI's Ctrl+C handler calls `stop()`.

A stopped batch starts no more episodes and stops the running ones after their current step. Those
end with end_reason "interrupted": their files are finished and say so, but they are not results,
so they never reach results.jsonl and a resume runs them again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Protocol

INTERRUPTED = "interrupted"


class Stoppable(Protocol):
    def stop(self, reason: str = "stopped") -> None: ...


class BatchControl:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._running: list[Stoppable] = []
        self._started: dict[int, float] = {}  # id(runner) -> when it started playing (time.perf_counter)
        self.interrupted: list[str] = []  # keys of episodes stopped part-way
        self.not_started: list[str] = []  # keys of episodes that were still queued
        self._abort_hooks: list[Callable[[], None]] = []

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    def stop(self) -> None:
        """Start no more episodes and stop the running ones; returns at once (safe in a signal handler:
        the lock is only ever held for a list operation, and never by the thread that calls this)."""
        with self._lock:
            self._stopping.set()
            running = list(self._running)
        for runner in running:
            runner.stop(INTERRUPTED)

    def on_abort(self, hook: Callable[[], None]) -> None:
        """Call `hook` on an abort (a second Ctrl+C): something this run started that must not outlive it,
        such as a private Ray. Hooks run in a signal handler: quick, and taking no lock."""
        self._abort_hooks.append(hook)

    def abort(self) -> None:
        for hook in list(self._abort_hooks):
            hook()

    def start(self, runner: Stoppable) -> bool:
        """Register a runner about to run; False if the batch is stopping (then do not run it)."""
        with self._lock:
            if self._stopping.is_set():
                return False
            self._running.append(runner)
            self._started[id(runner)] = time.perf_counter()
            return True

    def finished(self, runner: Stoppable) -> None:
        with self._lock:
            self._running.remove(runner)
            self._started.pop(id(runner), None)

    def playing(self) -> list[tuple[float, float]]:
        """For each episode playing in this process: how long it has played (s), and the share of its step
        budget played (a runner's `progress`; 0 where it says none), for the run's ETA."""
        now = time.perf_counter()
        with self._lock:
            return [(now - self._started[id(runner)], float(getattr(runner, "progress", 0.0)))
                    for runner in self._running]

    def skipped(self, key: str) -> None:
        with self._lock:
            self.not_started.append(key)

    def was_interrupted(self, key: str) -> None:
        with self._lock:
            self.interrupted.append(key)
