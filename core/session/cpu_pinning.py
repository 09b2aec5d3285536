"""Pinning an environment's processes to one CPU (core/session/vector_env.py says why it pays)."""

from __future__ import annotations

import contextlib
import os


def pin_to_cpu(cpu: int, pids: list[int]) -> None:
    """Keep processes on one CPU, every thread of each (Linux sets affinity per thread).

    An environment's step passes through its processes (its subprocess, its world, its evaluator) one after
    another, never two at once, so one CPU is all they need; left to the scheduler, each wake-up may find
    the CPU taken by another environment's process and wait for it. Where the system has no CPU affinity
    (macOS, Windows), they run unpinned."""
    set_affinity = getattr(os, "sched_setaffinity", None)
    if set_affinity is None:
        return
    for pid in pids:
        try:
            threads = [int(name) for name in os.listdir(f"/proc/{pid}/task")]
        except OSError:
            threads = [pid]
        for thread in threads:
            with contextlib.suppress(ProcessLookupError):  # a thread that ended meanwhile
                set_affinity(thread, {cpu})
