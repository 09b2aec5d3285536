"""The default executor: episodes in worker threads of this process, each with its own world and evaluator
processes, recording straight into the run folder. A run's model requests share one in-process limiter.

While it runs, the interpreter hands the GIL over every SWITCH_INTERVAL_S instead of every 5 ms: an episode's
step is a chain of short waits (the world, the evaluator, the model's socket), and after each one its thread
waited up to 5 ms for whichever other thread held the GIL. At 21 steps a second that made the time from a
model's reply to the next request 144 ms at the 95th percentile instead of 92 (README, Performance)."""

from __future__ import annotations

import sys
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path

from core.agents.models.rate_limit import LocalLimiter, RateLimits
from core.session.batch_control import BatchControl
from core.session.batch_driver import Finished
from core.session.episode_job import EpisodeJob, EpisodeOutcome, play_episode

SWITCH_INTERVAL_S = 0.0005


class LocalPool:
    def __init__(self, workers: int = 1) -> None:
        self.workers = max(1, workers)
        self._pool: ThreadPoolExecutor | None = None
        self._futures: dict[Future[EpisodeOutcome], EpisodeJob] = {}
        self._out = Path()
        self._control = BatchControl()
        self._limiter: LocalLimiter | None = None
        self._switch_interval: float | None = None  # the interpreter's own, restored on close

    def open(self, out: Path, control: BatchControl, limits: RateLimits | None) -> None:
        self._out, self._control = out, control
        self._limiter = LocalLimiter(limits) if limits is not None and limits.active else None
        self._pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="episode")
        if self.workers > 1 and self._switch_interval is None:
            self._switch_interval = sys.getswitchinterval()
            sys.setswitchinterval(min(self._switch_interval, SWITCH_INTERVAL_S))

    def submit(self, job: EpisodeJob) -> None:
        assert self._pool is not None, "open() first"
        self._futures[self._pool.submit(play_episode, job, self._out, self._control, self._limiter)] = job

    def collect(self, timeout: float) -> list[Finished]:
        if not self._futures:
            return []
        done, _ = wait(list(self._futures), timeout=timeout, return_when=FIRST_COMPLETED)
        finished: list[Finished] = []
        for future in done:
            job = self._futures.pop(future)
            error = future.exception()
            finished.append((job, error if error is not None else future.result()))
        return finished

    @property
    def outstanding(self) -> int:
        return len(self._futures)

    @property
    def running(self) -> int:
        return min(len(self._futures), self.workers)

    @property
    def capacity(self) -> int | None:
        return self.workers  # the driver keeps the rest, so a stop leaves nothing queued here

    def stop(self) -> None:
        self._control.stop()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
        if self._switch_interval is not None:
            sys.setswitchinterval(self._switch_interval)
            self._switch_interval = None
