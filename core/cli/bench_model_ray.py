"""`bench run --model-latency S --ray [ADDRESS]`: the same widths with the episodes on Ray, not the local pool.

The bench attaches to Ray once (a private local Ray by default, as `run --ray` starts one), so every width's
executor shares it and none stops it; it is left after the last width. Each episode asks for
`--cpus-per-episode` CPUs; by default the cluster's CPUs over the widest width, so every width fits at once
(an episode waiting on a model needs next to no CPU; Ray's scheduler would otherwise hold the width back to a
few episodes at a time, which measures Ray's queue, not the run).

Joined to a running cluster, the bench counts the CPU and memory of the Ray node on this machine (its raylet,
workers, and the worlds they start), which are not below the bench's own process; other nodes' are not seen."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Generator
from contextlib import contextmanager

import ray

from core.cli.proc_usage import with_marker
from core.cluster.connect import RayCluster, connect, disconnect
from core.cluster.ray_executor import RayExecutor
from core.cluster.ray_typed import nodes
from core.cluster.resources import episode_resources
from core.session.batch_driver import EpisodeExecutor

KEY_VARIABLE = "OPENAI_API_KEY"  # the stand-in model's key, set in the environment before Ray starts


@contextmanager
def ray_widths(args: argparse.Namespace, widest: int) -> Generator[tuple[RayCluster, float], None, None]:
    """Ray for the whole bench: (the cluster, CPUs each episode asks for). Ray's driver prints its raylet's
    warnings (worker start-ups beyond its expected concurrency, at 32 and 64) to standard output: while Ray is
    attached they go to standard error, and the figures keep standard output to themselves."""
    args.figures_to = sys.stdout
    sys.stdout = sys.stderr
    cluster = connect(args.ray)
    try:
        cpus = args.cpus_per_episode if args.cpus_per_episode is not None else cluster.cpus / widest
        yield cluster, cpus
    finally:
        disconnect()
        sys.stdout = args.figures_to


def ray_executor(args: argparse.Namespace, workers: int, *, cpus: float) -> EpisodeExecutor:
    """One width's executor: at most `workers` episodes handed to Ray at once."""
    executor = RayExecutor(args.ray, episode_resources("builtin", cpus), max_in_flight=workers,
                           needed_env=(KEY_VARIABLE,))
    executor.connect()  # attached already: checks the nodes, starts nothing
    return executor


def ray_processes_here() -> Callable[[], list[int]]:
    """A reader of this machine's Ray node's processes: every process started for its session names the
    session's folder (/tmp/ray/session_.../) on its command line."""
    here = ray.get_runtime_context().get_node_id()
    node = next(n for n in nodes() if n["NodeID"] == here)
    session = str(node["RayletSocketName"]).rsplit("/sockets/", 1)[0].encode()
    return lambda: with_marker(session)
