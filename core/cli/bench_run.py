"""`python main.py bench run`: whole episodes per minute through `run`'s machinery, with 1 and 2 local workers
and with Ray on this machine (a private local Ray, 1 CPU per episode, so 2 at once like the 2-worker pool),
and Ray's per-episode cost against the local pool's.

Each configuration runs the same seeded random-agent episodes into a fresh folder, timed from the first
episode handed over to the last row written. Starting Ray is timed apart (`ray_start_s`): a run pays it once,
not per episode.
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


def _timed(executor: EpisodeExecutor, folder: Path, episodes: int, budget: int) -> float:
    started = time.perf_counter()
    rows = run_batch(TASK, "goal", "random", episodes, 1, folder, RunOptions(step_budget=budget), lambda *_: None,
                     executor=executor)
    elapsed = time.perf_counter() - started
    failed = [r for r in rows if r.get("end_reason") == "error"]
    if len(rows) != episodes or failed:
        raise SystemExit(f"bench run: {len(failed)} of {episodes} episodes failed ({failed[0].get('error')})"
                         if failed else f"bench run: {len(rows)} of {episodes} episodes ran")
    return elapsed


def bench_run(args: argparse.Namespace, emit: Callable[..., Any]) -> None:
    episodes, budget = args.episodes, args.episode_steps
    with tempfile.TemporaryDirectory(prefix="pokegym-bench-run-") as folder:
        root = Path(folder)
        local_1 = _timed(LocalPool(1), root / "local1", episodes, budget)
        local_2 = _timed(LocalPool(2), root / "local2", episodes, budget)
        try:
            from core.cluster.ray_executor import RayExecutor
            from core.cluster.resources import episode_resources
        except ImportError:
            emit(args, "episodes_per_min_local_1", 60 * episodes / local_1, "episodes/min")
            emit(args, "episodes_per_min_local_2", 60 * episodes / local_2, "episodes/min", 60 * episodes / local_1,
                 "episodes_per_min_local_1")
            raise SystemExit("bench run: Ray is not installed (pip install -e '.[ray]'); the local figures are "
                             "above") from None
        executor = RayExecutor(None, episode_resources(cpus=1))
        started = time.perf_counter()
        executor.connect()
        ray_start = time.perf_counter() - started
        on_ray = _timed(executor, root / "ray", episodes, budget)
    emit(args, "episodes_per_min_local_1", 60 * episodes / local_1, "episodes/min")
    emit(args, "episodes_per_min_local_2", 60 * episodes / local_2, "episodes/min", 60 * episodes / local_1,
         "episodes_per_min_local_1")
    emit(args, "episodes_per_min_ray", 60 * episodes / on_ray, "episodes/min", 60 * episodes / local_2,
         "episodes_per_min_local_2")
    emit(args, "ray_overhead_ratio", on_ray / local_2, "ratio", local_2 / episodes, "local_2_seconds_per_episode",
         ratio=on_ray / local_2)
    emit(args, "ray_start_s", ray_start, "s")
