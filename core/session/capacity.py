"""How many model-bound episodes this machine holds at once: `run --workers auto`, and the refusal of a count
that cannot fit.

The figures come from `python main.py bench run --model-latency 3` (README, Performance): an episode in flight
(its world, its evaluator and its share of the harness) takes EPISODE_MIB of memory, and a machine keeps its
episodes at the model's pace (efficiency 0.90 or better) up to WORKERS_PER_CORE per core. A rate limit caps it
too: more workers than the limit lets make requests only wait for a permit, holding memory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from core.session.startup_gate import usable_cpus

EPISODE_MIB = 250.0        # memory per episode in flight, with a margin over the bench's PSS (138 MiB at 32 and 64)
WORKERS_PER_CORE = 32      # at efficiency >= 0.90 at 3 s a step, all in flight: 64 on 2 cores (bench run)
MODEL_LATENCY_S = 3.0      # a model call's usual time, for turning a per-minute limit into requests in flight
MEMORY_SHARE = 0.9         # of the memory available now; the rest for the system and the other programs


@dataclass(frozen=True)
class Capacity:
    cpus: int
    available_mib: float
    by_cpu: int
    by_memory: int
    by_rate: int | None  # None: no rate limit given

    @property
    def workers(self) -> int:
        """What `--workers auto` picks: the least of the three, at least 1."""
        limits = [self.by_cpu, self.by_memory] + ([self.by_rate] if self.by_rate is not None else [])
        return max(1, min(limits))

    def reason(self) -> str:
        """Which limit decided, in words."""
        if self.by_rate is not None and self.by_rate <= min(self.by_cpu, self.by_memory):
            return "the model rate limit given"
        if self.by_memory <= self.by_cpu:
            return f"{self.available_mib / 1024:.1f} GiB of memory available at {EPISODE_MIB:.0f} MiB an episode"
        return f"{self.cpus} CPUs at {WORKERS_PER_CORE} episodes each"


def available_mib() -> float:
    """MemAvailable from /proc/meminfo (what can be used without swapping), in MiB; inf where unknown."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return math.inf


def capacity(concurrent_requests: int | None = None, requests_per_minute: float | None = None) -> Capacity:
    """This machine's capacity for model-bound episodes, under the run's rate limits (if any)."""
    cpus = usable_cpus()
    memory = available_mib()
    by_memory = int(memory * MEMORY_SHARE / EPISODE_MIB) if math.isfinite(memory) else 1_000_000
    by_rate: int | None = None
    if requests_per_minute is not None:  # each episode in flight asks about every MODEL_LATENCY_S
        by_rate = max(1, math.ceil(requests_per_minute / 60 * MODEL_LATENCY_S))
    if concurrent_requests is not None:  # an episode holds its permit for the whole call, not between calls
        by_rate = min(by_rate, concurrent_requests) if by_rate is not None else concurrent_requests
    return Capacity(cpus, memory, cpus * WORKERS_PER_CORE, by_memory, by_rate)


def check_workers(workers: int, fits: Capacity) -> str | None:
    """Why `workers` episodes at once cannot run here (one line, with the number that fits), or None."""
    if workers < 1:
        return f"--workers must be at least 1, got {workers}; this machine fits {fits.workers} ({fits.reason()}): " \
               "--workers auto picks that"
    if workers > fits.by_memory:
        need = workers * EPISODE_MIB / 1024
        return (f"--workers {workers} needs about {need:.0f} GiB ({EPISODE_MIB:.0f} MiB an episode: its world, "
                f"evaluator and share of the harness), but {fits.available_mib / 1024:.1f} GiB is available; at most "
                f"{fits.by_memory} fit here (--workers auto picks {fits.workers}), or spread the run with --ray")
    return None
