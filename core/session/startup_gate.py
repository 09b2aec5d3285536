"""Episode start-ups, a few at a time: a world and its evaluator cost about 2 s of CPU to start, so 64 workers
starting at once share the cores for a minute or more, past the evaluator's 60 s lock timeout, and slow every
episode already stepping. The gate lets as many start at once as the process has CPUs; the rest wait their turn
(and give up waiting when the run stops)."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Generator

STOP_CHECK_S = 0.5  # how soon an episode waiting for its turn notices that the run is stopping


def usable_cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


class StartupGate:
    def __init__(self, slots: int) -> None:
        self.slots = max(1, slots)
        self._starting = 0
        self._changed = threading.Condition()

    @contextlib.contextmanager
    def turn(self, stopping: Callable[[], bool]) -> Generator[bool, None, None]:
        """Wait for a turn to start an episode: yields True while holding it, or False (holding nothing) when
        `stopping()` said so first."""
        with self._changed:
            while self._starting >= self.slots and not stopping():
                self._changed.wait(STOP_CHECK_S)
            admitted = not stopping()
            if admitted:
                self._starting += 1
        if not admitted:
            yield False
            return
        try:
            yield True
        finally:
            with self._changed:
                self._starting -= 1
                self._changed.notify()


STARTUP_GATE = StartupGate(usable_cpus())
