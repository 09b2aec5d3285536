"""`python main.py bench run --model-latency S`: model-bound runs, as a real model makes them, at several widths.

Each width W runs W seeded episodes of the built-in world at once (W local workers), every step a request
through the real `openai` SDK over real HTTP to a stand-in model in a process of its own
(core/cli/bench_model_server.py) that answers a valid action after S seconds. It reports per width:

* `agent_steps_per_s` beside the ideal W / S, and their ratio `model_bound_efficiency`: the episodes' steps
  over the time each spent stepping (from its first request to its last reply: start-up apart), times S;
  `in_flight_peak`, the most episodes stepping at one moment (W once start-ups are shorter than episodes);
* `turnaround_ms_p95`: from a reply leaving the server to the same episode's next request arriving; and
  `turnaround_ms_p95_all_started`, the same once every episode has started (no world starting beside them);
* `cpu_ms_per_step`: CPU of the harness and every world and evaluator of the run (the stand-in model not),
  over the agent steps, while every episode is stepping (start-ups apart);
* `pss_mib_per_episode`: the harness, worlds and evaluators' PSS from /proc (each shared page counted once),
  at the sample with the most episodes up, over those episodes;
* `episode_startup_s` (median) and `_max`: from the width's start to an episode's first request (world and
  evaluator up, start state loaded); with W at once, the maximum is the start-up storm.

Then `max_workers_at_90pct`: the widest measured width whose efficiency is at least 0.90 with no episode failed
and nearly all its episodes stepping at one moment.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import itertools
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.cli.proc_usage import cpu_s, descendants, pss_mib
from core.paths import PROJECT_ROOT
from core.session.batch import run_batch
from core.session.batch_driver import EpisodeExecutor
from core.session.runner import RunOptions
from core.session.startup_gate import usable_cpus

TASK = "q08_site_navigation"
GOAL_EFFICIENCY = 0.90
IN_FLIGHT_SHARE = 0.9  # of a width's episodes that must have stepped at one moment for it to count
SAMPLE_EVERY_S = 1.0
PSS_EVERY = 8  # samples
MIN_STEADY = 20  # turnarounds after the last start-up, for their p95
KINDS = ("harness", "world", "evaluator", "ray", "other")  # ray: its own daemons (--ray)
KEY = "sk-bench-loopback-only"  # the stand-in model's "key": the real one never leaves for a loopback bench
# An episode's start-up (world and evaluator up, start state loaded) costs about this much CPU: 64 of them, taking
# turns on 2 cores, took 72 s on the quiet development machine (2026-12-06). By default each width's episodes
# last that long again plus STEADY_STEPS, so that all of them step at once for a while, as in a real run.
STARTUP_CPU_S = 2.5
STEADY_STEPS = 20


@dataclass(frozen=True)
class Width:
    workers: int
    steps: int
    steps_per_s: float
    ideal: float
    efficiency: float
    turnaround_ms_p95: float
    turnaround_ms_p95_started: float | None  # once every episode has started (no start-up beside the steps)
    cpu_ms_per_step: float
    pss_mib_per_episode: float
    startup_s: float
    startup_s_max: float
    in_flight_peak: int
    cpu_ms_per_step_by_kind: dict[str, float]  # harness, world, evaluator (empty: no window where all stepped)
    failed: int


class StandIn:
    """The stand-in model's process."""

    def __init__(self, latency: float, jitter: float, rate_429: float) -> None:
        command = [sys.executable, "-m", "core.cli.bench_model_server", "--latency", str(latency), "--jitter",
                   str(jitter), "--rate-429", str(rate_429)]
        self.process = subprocess.Popen(command, cwd=PROJECT_ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True)
        assert self.process.stdin is not None and self.process.stdout is not None  # both pipes
        self._in, self._out = self.process.stdin, self.process.stdout
        self.port = int(json.loads(self._out.readline())["port"])

    def take(self) -> list[tuple[int, float, float, int]]:
        self._in.write("take\n")
        self._in.flush()
        return [tuple(row) for row in json.loads(self._out.readline())]

    def close(self) -> None:
        self._in.close()
        self.process.wait(timeout=30)


class UsageSampler:
    """Every SAMPLE_EVERY_S, the CPU time of this process (less this sampler's own) and of every process below it
    that it has seen (an ended one counts what it had used when last seen) but the stand-in model; every
    PSS_EVERY samples also their PSS, keeping the sample with the most worlds up."""

    def __init__(self, exclude: int, also: Callable[[], list[int]] | None = None) -> None:
        self.exclude = exclude
        self.also = also  # more processes of the run that are not below this one (a joined Ray's, on this machine)
        self.cpu: list[tuple[float, float]] = []  # (time.monotonic, CPU seconds so far)
        # (time.monotonic, CPU seconds of every process of each kind seen so far)
        self.kinds: dict[str, list[tuple[float, float]]] = {kind: [] for kind in KINDS}
        self._seen: dict[int, tuple[str, float]] = {}  # pid -> (kind, CPU seconds when last seen)
        self.memory: tuple[int, float] = (0, 0.0)  # (worlds up, MiB)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="bench-usage", daemon=True)

    def _loop(self) -> None:
        rounds = 0
        while True:
            also = self.also() if self.also is not None else []
            pids = [pid for pid in descendants(os.getpid(), also) if pid != self.exclude]
            now, by_kind = time.monotonic(), {kind: 0.0 for kind in KINDS}
            own = os.times()
            by_kind["harness"] = own.user + own.system - time.thread_time()  # this sampler's own reading apart
            for pid in pids:
                kind = self._seen[pid][0] if pid in self._seen else _kind(pid)
                self._seen[pid] = (kind, max(cpu_s(pid), self._seen.get(pid, (kind, 0.0))[1]))
            for kind, seconds in self._seen.values():  # an ended process keeps what it last used
                by_kind[kind] += seconds
            self.cpu.append((now, sum(by_kind.values())))
            for kind, seconds in by_kind.items():
                self.kinds[kind].append((now, seconds))
            worlds = sum(1 for kind, _ in (self._seen.get(pid, ("other", 0.0)) for pid in pids) if kind == "world")
            # Reading PSS walks page tables, which is dear: every PSS_EVERY samples, and when more worlds are up
            # than at the last reading (so a short width gets one too).
            due = rounds % PSS_EVERY == PSS_EVERY - 1 or worlds > self.memory[0]
            if due and worlds >= self.memory[0]:  # the highest reading with the most worlds up
                total = pss_mib(os.getpid()) + sum(pss_mib(pid) for pid in pids)
                self.memory = (worlds, max(total, self.memory[1]) if worlds == self.memory[0] else total)
            rounds += 1
            if self._stop.wait(SAMPLE_EVERY_S):
                return

    def cpu_between(self, start: float, end: float, kind: str | None = None) -> float:
        """CPU seconds used between two moments (by one kind of process), interpolated between samples."""
        points = self.cpu if kind is None else self.kinds[kind]
        return _interpolate(points, end) - _interpolate(points, start)

    def __enter__(self) -> UsageSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _interpolate(points: list[tuple[float, float]], moment: float) -> float:
    if moment <= points[0][0]:
        return points[0][1]
    for (t0, v0), (t1, v1) in itertools.pairwise(points):
        if t0 <= moment <= t1:
            return v0 + (v1 - v0) * (moment - t0) / (t1 - t0) if t1 > t0 else v1
    return points[-1][1]


def _kind(pid: int) -> str:
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "other"
    if b"core.world" in command:
        return "world"
    if b"core.evaluation" in command:
        return "evaluator"
    if command.startswith(b"ray::") or b"default_worker.py" in command:
        return "harness"  # a Ray worker runs an episode's harness (or waits for one)
    return "ray" if b"/ray/" in command or b"raylet" in command or b"gcs_server" in command else "other"


def _p95(values: list[float]) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def measure(workers: int, latency: float, budget: int, stand_in: StandIn, folder: Path,
            executor: EpisodeExecutor | None = None, also: Callable[[], list[int]] | None = None) -> Width:
    """One width: `workers` episodes at once of `budget` steps (on `executor`: default, the local pool; `also`:
    the run's processes on this machine that are not below this one)."""
    stand_in.take()  # forget anything earlier
    started = time.monotonic()
    with UsageSampler(stand_in.process.pid, also) as usage:
        rows = run_batch(TASK, "goal", "model:openai:bench-model", workers, workers, folder,
                         RunOptions(step_budget=budget), _quiet,
                         {"base_url": f"http://127.0.0.1:{stand_in.port}/v1"}, executor=executor)
    for row in rows:  # the run folder is temporary: say why here, or the reason is lost with it
        if row.get("end_reason") == "error":
            print(f"bench run: width {workers}: {row.get('key')} failed: {row.get('error')}", file=sys.stderr,
                  flush=True)
    by_connection: dict[int, list[tuple[float, float, int]]] = {}
    for connection, arrived, answered, status in stand_in.take():
        by_connection.setdefault(connection, []).append((arrived, answered, status))
    turnarounds: list[tuple[float, float]] = []  # (when the reply left, ms until the next request)
    spans: list[tuple[float, float]] = []
    steps, stepping_s = 0, 0.0
    for requests in by_connection.values():
        requests.sort()
        steps += sum(1 for *_, status in requests if status == 200)
        spans.append((requests[0][0], requests[-1][1]))
        stepping_s += requests[-1][1] - requests[0][0]
        turnarounds += [(before[1], 1000 * (after[0] - before[1])) for before, after in itertools.pairwise(requests)]
    # CPU per step where every episode is stepping (from the last one's first request to the first one's last
    # reply), so that start-ups are not counted as steps; the whole run where the start-ups never overlapped.
    window = (max(s for s, _ in spans), min(e for _, e in spans)) if spans else (started, started)
    split = window[1] - window[0] >= 2 * latency
    if not split:
        window = (started, time.monotonic())
    in_window = sum(1 for requests in by_connection.values() for _, answered, status in requests
                    if status == 200 and window[0] <= answered <= window[1])
    cpu = usage.cpu_between(*window)
    kinds = {kind: 1000 * usage.cpu_between(*window, kind=kind) / max(1, in_window) for kind in KINDS} if split \
        else {}
    efficiency = steps * latency / stepping_s if stepping_s > 0 else 0.0
    starts = [s - started for s, _ in spans]
    worlds, mib = usage.memory
    all_started = max((start for start, _ in spans), default=started)
    steady = [ms for moment, ms in turnarounds if moment >= all_started]
    return Width(workers, steps, efficiency * workers / latency, workers / latency, efficiency,
                 _p95([ms for _, ms in turnarounds]), _p95(steady) if len(steady) >= MIN_STEADY else None,
                 1000 * cpu / max(1, in_window), mib / max(1, worlds), statistics.median(starts) if starts else 0.0,
                 max(starts, default=0.0), _in_flight_peak(spans), kinds,
                 sum(1 for row in rows if row.get("end_reason") == "error"))


def _in_flight_peak(spans: list[tuple[float, float]]) -> int:
    """The most episodes stepping at one moment (between their first request and their last reply)."""
    events = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    peak = current = 0
    for _, change in events:
        current += change
        peak = max(peak, current)
    return peak


def _quiet(*_: object) -> None:
    """No progress lines."""


def widths(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise SystemExit(f"bench run: --workers takes a comma list of counts (1,8,32,64), got {text!r}") from None
    if not values or min(values) < 1:
        raise SystemExit(f"bench run: every worker count must be at least 1, got {text!r}")
    return values


def episode_steps(workers: int, latency: float, cpus: int) -> int:
    """Steps an episode of a width needs by default: its width's start-ups, taking turns on the CPUs, then
    STEADY_STEPS with every episode stepping (the steps before it is their turn count too)."""
    return STEADY_STEPS + math.ceil(workers * STARTUP_CPU_S / max(1, cpus) / latency)


def bench_model(args: argparse.Namespace, emit: Callable[..., Any]) -> None:
    latency = float(args.model_latency)
    os.environ["OPENAI_API_KEY"] = KEY
    counts = widths(args.workers)
    stand_in = StandIn(latency, args.jitter, args.rate_429)
    results: list[Width] = []
    try:
        with tempfile.TemporaryDirectory(prefix="pokegym-bench-model-") as folder, contextlib.ExitStack() as stack:
            executor_for: Callable[[int], EpisodeExecutor | None] = lambda _: None  # noqa: E731 - the local pool
            also: Callable[[], list[int]] | None = None
            if args.ray is not None:
                from core.cli.bench_model_ray import ray_executor, ray_processes_here, ray_widths

                cluster, cpus = stack.enter_context(ray_widths(args, max(counts)))
                emit(args, "ray_cpus_per_episode", cpus, "CPUs", cluster.cpus, "cluster_cpus")
                executor_for = functools.partial(ray_executor, args, cpus=cpus)
                also = None if cluster.started_here else ray_processes_here()
            for workers in counts:
                executor = executor_for(workers)
                budget = args.episode_steps or episode_steps(workers, latency, usable_cpus())
                emit(args, f"episode_steps_w{workers}", budget, "steps")
                width = measure(workers, latency, budget, stand_in, Path(folder) / f"w{workers}", executor, also)
                results.append(width)
                _emit_width(args, emit, width)
    finally:
        stand_in.close()
    # A width counts where its episodes kept the pace, none failed, and (nearly) all of them stepped at once: with
    # start-ups longer than the episodes, a width never had that many in flight (give more --episode-steps).
    fitting = [w.workers for w in results if w.efficiency >= GOAL_EFFICIENCY and not w.failed
               and w.in_flight_peak >= IN_FLIGHT_SHARE * w.workers]
    emit(args, "max_workers_at_90pct", max(fitting, default=0), "workers")


def _emit_width(args: argparse.Namespace, emit: Callable[..., Any], width: Width) -> None:
    w = width.workers
    emit(args, f"agent_steps_per_s_w{w}", width.steps_per_s, "steps/s", width.ideal, "ideal_workers_over_latency")
    emit(args, f"model_bound_efficiency_w{w}", width.efficiency, "ratio")
    emit(args, f"in_flight_peak_w{w}", width.in_flight_peak, "episodes")
    emit(args, f"turnaround_ms_p95_w{w}", width.turnaround_ms_p95, "ms")
    if width.turnaround_ms_p95_started is not None:
        emit(args, f"turnaround_ms_p95_all_started_w{w}", width.turnaround_ms_p95_started, "ms")
    emit(args, f"cpu_ms_per_step_w{w}", width.cpu_ms_per_step, "ms")
    for kind in ("harness", "world", "evaluator", "ray"):
        if width.cpu_ms_per_step_by_kind.get(kind):
            emit(args, f"cpu_ms_per_step_{kind}_w{w}", width.cpu_ms_per_step_by_kind[kind], "ms")
    emit(args, f"pss_mib_per_episode_w{w}", width.pss_mib_per_episode, "MiB")
    emit(args, f"episode_startup_s_w{w}", width.startup_s, "s")
    emit(args, f"episode_startup_s_max_w{w}", width.startup_s_max, "s")
    if width.failed:
        emit(args, f"failed_episodes_w{w}", width.failed, "episodes")
