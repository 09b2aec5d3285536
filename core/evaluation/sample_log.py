"""SampleLog: the evaluator client's samples, indexed from the first ever received, keeping only the
most recent ones so that a studio left connected for days does not grow without bound.

Readers keep a cursor (an absolute index) and take `log[cursor:]`; the runner does so every step
and the live view every 100 ms. The limit is set by the longest wait between two of the runner's
reads: one model call that times out and retries (5 attempts of 60 s plus back-off, about 5.3
minutes). A longer pause loses only samples of a game that stood still in lockstep, and the runner
logs how many.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterator
from typing import overload

from core.evaluation.sample import StateSample

KEEP_SAMPLES = 24_000  # 6.7 minutes at 60 Hz, about 6 MB (tests/studio/test_long_sessions.py measures it)


class SampleLog:
    def __init__(self, keep: int = KEEP_SAMPLES) -> None:
        self._recent: deque[StateSample] = deque(maxlen=keep)
        self._total = 0
        self._lock = threading.Lock()

    def append(self, sample: StateSample) -> None:
        with self._lock:
            self._recent.append(sample)
            self._total += 1

    def since(self, cursor: int) -> tuple[list[StateSample], int, int]:
        """Samples from absolute index `cursor` on, the cursor to use next time, and how many samples
        between `cursor` and the oldest kept one were dropped (0 unless the reader fell far behind).
        One lock for all three, so a sample arriving meanwhile is neither lost nor taken twice."""
        with self._lock:
            first = self._total - len(self._recent)
            start = max(cursor, first)
            return [self._recent[i - first] for i in range(start, self._total)], self._total, start - cursor

    @property
    def dropped(self) -> int:
        """How many of the oldest samples are no longer kept."""
        return self._total - len(self._recent)

    def __len__(self) -> int:
        return self._total

    def __bool__(self) -> bool:
        return self._total > 0

    def __iter__(self) -> Iterator[StateSample]:
        with self._lock:
            return iter(list(self._recent))

    @overload
    def __getitem__(self, index: int) -> StateSample: ...

    @overload
    def __getitem__(self, index: slice) -> list[StateSample]: ...

    def __getitem__(self, index: int | slice) -> StateSample | list[StateSample]:
        with self._lock:
            first = self._total - len(self._recent)
            if isinstance(index, slice):
                start, stop, step = index.indices(self._total)
                start, stop = max(start, first), max(stop, first)  # what was dropped is gone
                return [self._recent[i - first] for i in range(start, stop, step)]
            position = index + self._total if index < 0 else index
            if not first <= position < self._total:
                raise IndexError(f"sample {index} is not kept (kept: {first}..{self._total - 1})")
            return self._recent[position - first]
