"""`python main.py bench run`: whole episodes per minute through `run`'s machinery, with 1 and 2 local workers
and with Ray on this machine (a private local Ray, 1 CPU per episode, so 2 at once like the 2-worker pool),
and Ray's per-episode cost against the local pool's.

Each configuration runs the same seeded random-agent episodes into a fresh folder, timed from the first
episode handed over to the last row written, in ROUNDS interleaved rounds after an untimed warm-up round.
Ray is started once and timed apart (`ray_start_s`), and so is its warm-up round (`ray_warmup_s`: its
first episodes start Ray's worker processes): a run pays both once, not per episode.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.session.batch import run_batch
from core.session.batch_driver import EpisodeExecutor
from core.session.local_pool import LocalPool
from core.session.runner import RunOptions

TASK = "q08_site_navigation"
ROUNDS = 2


def _quiet(*_: object) -> None:
    """No progress lines."""


def _timed(executor: EpisodeExecutor, folder: Path, episodes: int, budget: int) -> float:
    started = time.perf_counter()
    rows = run_batch(TASK, "goal", "random", episodes, 1, folder, RunOptions(step_budget=budget), _quiet,
                     executor=executor)
    elapsed = time.perf_counter() - started
    failed = [r for r in rows if r.get("end_reason") == "error"]
    if len(rows) != episodes or failed:
        raise SystemExit(f"bench run: {len(failed)} of {episodes} episodes failed ({failed[0].get('error')})"
                         if failed else f"bench run: {len(rows)} of {episodes} episodes ran")
    return elapsed


def _executors() -> dict[str, EpisodeExecutor]:
    from core.cluster.ray_executor import RayExecutor
    from core.cluster.resources import episode_resources

    return {"local_1": LocalPool(1), "local_2": LocalPool(2),
            "ray": RayExecutor(None, episode_resources(cpus=1))}  # 1 CPU each: 2 at once on 2 cores, as local_2


def bench_run(args: argparse.Namespace, emit: Callable[..., Any]) -> None:
    episodes, budget = args.episodes, args.episode_steps
    try:
        from core.cluster.connect import connect, disconnect
    except ImportError:
        raise SystemExit("bench run: Ray is not installed (pip install -e '.[ray]')") from None
    seconds = {"local_1": 0.0, "local_2": 0.0, "ray": 0.0}
    started = time.perf_counter()
    connect(None)  # a private local Ray, kept across rounds (as a run keeps it across its episodes)
    ray_start = time.perf_counter() - started
    try:
        with tempfile.TemporaryDirectory(prefix="pokegym-bench-run-") as folder:
            # One untimed round first: Ray's first episodes start its worker processes and import the project
            # there, a cost a run pays once (reported as ray_warmup_s), like the start itself.
            warmup = {name: _timed(executor, Path(folder) / f"warmup-{name}", 2, budget)
                      for name, executor in _executors().items() if name != "local_1"}
            for round_number in range(ROUNDS):  # interleaved, so a shared machine's load falls on all alike
                for name, executor in _executors().items():
                    seconds[name] += _timed(executor, Path(folder) / f"{name}-{round_number}", episodes, budget)
    finally:
        disconnect()
    total = ROUNDS * episodes
    per_min = {name: 60 * total / value for name, value in seconds.items()}
    emit(args, "episodes_per_min_local_1", per_min["local_1"], "episodes/min")
    emit(args, "episodes_per_min_local_2", per_min["local_2"], "episodes/min", per_min["local_1"],
         "episodes_per_min_local_1")
    emit(args, "episodes_per_min_ray", per_min["ray"], "episodes/min", per_min["local_2"], "episodes_per_min_local_2")
    emit(args, "ray_overhead_ratio", seconds["ray"] / seconds["local_2"], "ratio", seconds["local_2"] / total,
         "local_2_seconds_per_episode", ratio=seconds["ray"] / seconds["local_2"])
    emit(args, "ray_start_s", ray_start, "s")
    emit(args, "ray_warmup_s", warmup["ray"], "s", warmup["local_2"], "local_2_warmup_s")
