"""The driver of a batch run: hands episodes to an executor (the local pool, or Ray), writes every row itself,
retries infrastructure errors when asked (--retries), reports progress, and stops cleanly.

Only this loop, running in the driver process, writes results.jsonl and errors.jsonl: a row is appended once
per finished try, whatever the executor did to get it (a Ray task retried after its worker died still yields
one row). Executors deliver the episode files into the run folder before they hand back the row.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from core.agents.models.rate_limit import RateLimits
from core.session import run_folder
from core.session.batch_control import INTERRUPTED, BatchControl
from core.session.episode_job import RESULT, SKIPPED, EpisodeJob, EpisodeOutcome
from core.session.eta import time_left

SIGNAL_CHECK_S = 0.2  # the main thread wakes this often, so Python runs a Ctrl+C handler promptly

Finished = tuple[EpisodeJob, "EpisodeOutcome | BaseException"]


@dataclass(frozen=True)
class BatchStatus:
    """Where a run stands, for a progress display."""

    done: int          # episodes of the run with a row (results and errors), this call's and earlier ones
    total: int         # episodes in the run
    running: int       # episodes playing now
    finished_now: int  # rows written by this call
    elapsed_s: float   # since this call started
    workers: int = 0   # episodes the executor runs at once (0: unknown)
    mean_episode_s: float | None = None  # the mean time of this call's finished episodes
    running_ages_s: tuple[float, ...] = ()  # how long each running episode has run
    running_progress: tuple[float, ...] = ()  # the share of its step budget each has played (0: unknown)

    @property
    def eta_s(self) -> float | None:
        """Seconds left; None until an episode has finished. With the episodes' times and the workers known,
        the running ones are expected to end at the mean time and the queued ones to follow (core/session/eta.py);
        otherwise this call's pace so far."""
        if self.finished_now == 0 or self.elapsed_s <= 0:
            return None
        left = max(0, self.total - self.done)
        if self.mean_episode_s is not None and self.workers > 0:
            queued = max(0, left - len(self.running_ages_s))
            return time_left(self.mean_episode_s, self.running_ages_s, queued, self.workers, self.running_progress,
                             self.finished_now)
        return left * self.elapsed_s / self.finished_now


class EpisodeExecutor(Protocol):
    """Where episodes run. `collect` returns the jobs that ended since the last call, each with its outcome
    or, for a failure that is no episode's fault (a bug, a full disk), the exception."""

    def open(self, out: Path, control: BatchControl, limits: RateLimits | None) -> None: ...

    def submit(self, job: EpisodeJob) -> None: ...

    def collect(self, timeout: float) -> list[Finished]: ...

    @property
    def outstanding(self) -> int: ...

    @property
    def running(self) -> int: ...

    @property
    def capacity(self) -> int | None:
        """How many episodes to hand over at once (None: all, and let the executor queue them)."""

    def stop(self) -> None:
        """Queued episodes never start; running ones stop after their step (the run's control says so)."""

    def close(self) -> None: ...


def drive(jobs: list[EpisodeJob], executor: EpisodeExecutor, out: Path, control: BatchControl,
          total: int, retries: int, limits: RateLimits | None,
          progress: Callable[[int, int, dict[str, Any]], None],
          status: Callable[[BatchStatus], None] | None = None) -> list[dict[str, Any]]:
    """Run `jobs` on `executor`; the rows written (results and infrastructure errors), in finishing order."""
    results_path, errors_path = out / run_folder.RESULTS, out / run_folder.ERRORS
    already = total - len(jobs)
    queue = deque(jobs)
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    stopped = False
    handed: dict[int, float] = {}  # id(job) -> when it was handed over, in order: the oldest are the running ones
    episode_s: list[float] = []  # how long each finished episode took, from being handed over

    def report() -> None:
        if status is None:
            return
        now, running = time.perf_counter(), executor.running
        playing = control.playing()  # episodes of this process (the local pool) with their share of the budget
        ages = tuple(age for age, _ in playing) or tuple(now - moment for moment in list(handed.values())[:running])
        workers = executor.capacity or running
        mean = sum(episode_s) / len(episode_s) if episode_s else None
        status(BatchStatus(already + len(rows), total, running, len(rows), now - started, workers, mean, ages,
                           tuple(share for _, share in playing)))

    executor.open(out, control, limits)
    try:
        while queue or executor.outstanding:
            if control.stopping and not stopped:
                stopped = True
                executor.stop()
                for job in queue:
                    control.skipped(job.key)
                queue.clear()
            capacity = executor.capacity
            while queue and (capacity is None or executor.outstanding < capacity):
                job = queue.popleft()
                handed[id(job)] = time.perf_counter()
                executor.submit(job)
            for job, outcome in executor.collect(SIGNAL_CHECK_S):
                if isinstance(outcome, BaseException):
                    raise outcome
                handed_at = handed.pop(id(job), None)
                if outcome.kind == RESULT and handed_at is not None:
                    episode_s.append(time.perf_counter() - handed_at)
                if outcome.kind == SKIPPED:
                    control.skipped(job.key)
                elif outcome.kind == INTERRUPTED:
                    control.was_interrupted(job.key)  # its file says so; no result, it runs again on resume
                elif outcome.kind == RESULT and outcome.row is not None:
                    row = outcome.row
                    failed = run_folder.is_error(row)
                    with (errors_path if failed else results_path).open("a") as handle:
                        handle.write(json.dumps(row, default=str) + "\n")
                    rows.append(row)
                    report()  # so the line below shows the running count as it is now
                    progress(already + len(rows), total, row)
                    # A broken task fails the same way every time: only infrastructure errors are retried.
                    retryable = row.get("end_reason") == run_folder.ERROR
                    if retryable and job.attempt <= retries and not control.stopping:
                        # The project's own retry of an infrastructure error; the failed try stays in errors.jsonl.
                        queue.appendleft(dataclasses.replace(job, attempt=job.attempt + 1))
                        already -= 1  # the retry will write the episode's row again
            report()
    except BaseException:
        control.stop()  # a failure (a full disk, a bug) ends the batch cleanly instead of running the queue
        executor.stop()
        raise
    finally:
        executor.close()
    return rows
