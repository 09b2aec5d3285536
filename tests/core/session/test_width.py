"""A run at width: many episodes ending at the same moment, and the ETA of a run of many waves.

Sixty-four worlds are more than a test on this machine can start, so the first test keeps everything real but
the episodes themselves: the local pool's 64 threads, the driver, the run folder; the episodes all end on one
barrier. A real 16-worker run is stopped with Ctrl+C in tests/core/cli/test_run_width.py.
"""

from __future__ import annotations

import json
import random
import threading
from pathlib import Path

import pytest

from core.session import local_pool
from core.session.batch import run_batch
from core.session.batch_control import BatchControl
from core.session.batch_driver import BatchStatus
from core.session.episode_job import RESULT, EpisodeJob, EpisodeOutcome
from core.session.runner import RunOptions

WIDTH = 64


def test_64_episodes_ending_at_once_write_every_row_whole(tmp_path, monkeypatch):
    together = threading.Barrier(WIDTH)

    def episode(job: EpisodeJob, root: Path, control: BatchControl, limiter: object = None) -> EpisodeOutcome:
        together.wait(timeout=30)  # all 64 running at once, and all end at this moment
        # Rows longer than a pipe's atomic write (4 KiB), as a model's long reasoning makes them.
        return EpisodeOutcome(RESULT, {"key": job.key, "task_id": job.spec.task.id, "success": False,
                                       "end_reason": "budget", "thought": "x" * 9000})

    monkeypatch.setattr(local_pool, "play_episode", episode)
    out = tmp_path / "run"
    rows = run_batch("q08_site_navigation", "goal", "random", WIDTH, WIDTH, out, RunOptions(step_budget=1),
                     lambda *_: None)
    lines = (out / "results.jsonl").read_text().splitlines()
    assert len(rows) == len(lines) == WIDTH
    written = [json.loads(line) for line in lines]  # every line is one whole row
    assert sorted(row["key"] for row in written) == sorted(row["key"] for row in rows)
    assert all(len(row["thought"]) == 9000 for row in written)


@pytest.mark.parametrize(("workers", "episodes"), [(16, 200), (64, 450)])
def test_after_the_first_tenth_of_a_run_the_eta_is_within_a_fifth_of_the_time_left(workers, episodes):
    """A run of many waves whose episodes last 10 min ± 25%, each stepping at an even pace to its budget,
    scheduled as the pool does; the ETA is read as each episode ends, from what the driver knows then (the
    finished episodes' times; how long each running one has played, and what share of its budget)."""
    draw = random.Random(7)
    lengths = [draw.uniform(450, 750) for _ in range(episodes)]
    free = [0.0] * workers
    spans: list[tuple[float, float]] = []
    for length in lengths:  # each episode starts on the first worker free
        start = min(free)
        free[free.index(start)] = start + length
        spans.append((start, start + length))
    end = max(stop for _, stop in spans)
    checked = 0
    for now in sorted(stop for _, stop in spans):
        if not 0.1 * end <= now <= 0.9 * end:
            continue
        finished = [stop - start for start, stop in spans if stop <= now]
        playing = [(now - start, (now - start) / (stop - start)) for start, stop in spans if start <= now < stop]
        status = BatchStatus(len(finished), episodes, len(playing), len(finished), now, workers,
                             sum(finished) / len(finished), tuple(age for age, _ in playing),
                             tuple(share for _, share in playing))
        assert status.eta_s is not None
        assert abs(status.eta_s - (end - now)) <= 0.2 * (end - now), (now, status.eta_s, end - now)
        checked += 1
    assert checked > episodes // 2


def test_a_world_that_does_not_take_its_connection_is_that_episodes_error_not_the_runs(tmp_path, monkeypatch):
    """In a start-up storm a world process may start and still not take the connection within 10 s; that
    ended the whole run with a traceback. It is one episode's infrastructure error, and the run goes on."""
    from core.game import child, ipc

    def busy(endpoint: ipc.Endpoint, timeout: float = 10.0) -> object:
        raise ipc.ConnectionBusyError(f"no answer from {endpoint.address} within {timeout:.0f} s")

    monkeypatch.setattr(child.ipc, "connect", busy)
    out = tmp_path / "run"
    rows = run_batch("q08_site_navigation", "goal", "random", 1, 1, out, RunOptions(step_budget=1), lambda *_: None)
    assert [row["end_reason"] for row in rows] == ["error"]
    assert "did not take the connection" in rows[0]["error"] and "--workers" in rows[0]["error"]
    assert json.loads((out / "errors.jsonl").read_text())["key"] == rows[0]["key"]
