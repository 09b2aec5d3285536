"""Vectorized environments: N built-in worlds stepped in parallel, as RL libraries expect.

`make_vector_env` is an `AsyncVectorEnv` of `gymnasium.make("PokeGym/Harborvale-v0")`s: each environment
lives in a subprocess of its own and starts its own world and evaluator processes there, so N environments
use N times the processes and step on as many cores, each environment pinned to a CPU (below). Processes
are started with "spawn", never forked from a parent that may already hold threads (an evaluator client, a
studio).

Seeding: `reset(seed=s)` gives environment i the seed s + i (Gymnasium's rule). The worlds are lockstep and
deterministic, so the same seed and the same actions give the same observations and rewards, run after run;
the seed drives the action space's sampling (`envs.action_space.seed(s)`) and any randomness a wrapper adds.
"""

from __future__ import annotations

import os
from functools import partial
from typing import Any, cast

import gymnasium as gym

import core.session.gym_env  # noqa: F401  # pyright: ignore[reportUnusedImport]  # registers PokeGym/Harborvale-v0
from core.session.cpu_pinning import pin_to_cpu

ENV_ID = "PokeGym/Harborvale-v0"


def _make_env(**kwargs: Any) -> gym.Env:
    # Module level, so a spawned subprocess unpickles it by importing this module, which registers the id.
    return gym.make(ENV_ID, **kwargs)


def make_vector_env(num_envs: int, task_id: str = "q08_site_navigation", width: int = 160, height: int = 120,
                    dense_reward: bool = True, step_budget: int | None = None,
                    context: str = "spawn", pin_cpus: bool = True, **env_kwargs: Any) -> gym.vector.VectorEnv:
    """`num_envs` PokeGym environments stepped in parallel (AsyncVectorEnv), each in its own processes.

    With `pin_cpus` (the default), environment i keeps its subprocess, world and evaluator on CPU i (cycling
    through the CPUs this process may use): a step runs through those processes one after another, and on
    a small machine, unpinned, each of them wakes to find its CPU taken by another environment's process.
    On 2 cores it is the difference between 1.3-1.5x and 1.7-1.85x from a second environment (README,
    `bench rl`). Turn it off where something else owns the CPUs (a learner pinned to some of them)."""
    if num_envs < 1:
        raise ValueError(f"num_envs must be at least 1, got {num_envs}")
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    pinning = pin_cpus and len(cpus) > 1
    kwargs = dict(task_id=task_id, width=width, height=height, dense_reward=dense_reward,
                  step_budget=step_budget, **env_kwargs)
    env_fns = [partial(_make_env, **kwargs, **({"cpu": cpus[i % len(cpus)]} if pinning else {}))
               for i in range(num_envs)]
    envs = gym.vector.AsyncVectorEnv(env_fns, context=context)
    if pinning:
        for i, process in enumerate(envs.processes):
            pin_to_cpu(cpus[i % len(cpus)], [cast(int, process.pid)])  # started: it has a pid
    return envs
