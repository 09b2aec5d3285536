"""Vectorized environments: N built-in worlds stepped in parallel, as RL libraries expect.

`make_vector_env` is `gymnasium.make_vec("PokeGym/Harborvale-v0", vectorization_mode="async")`: each
environment lives in a subprocess of its own and starts its own world and evaluator processes there, so N
environments use N times the processes and step on as many cores. Processes are started with "spawn",
never forked from a parent that may already hold threads (an evaluator client, a studio).

Seeding: `reset(seed=s)` gives environment i the seed s + i (Gymnasium's rule). The worlds are lockstep and
deterministic, so the same seed and the same actions give the same observations and rewards, run after run;
the seed drives the action space's sampling (`envs.action_space.seed(s)`) and any randomness a wrapper adds.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

import core.session.gym_env  # noqa: F401 - registers PokeGym/Harborvale-v0

ENV_ID = "PokeGym/Harborvale-v0"


def make_vector_env(num_envs: int, task_id: str = "q08_site_navigation", width: int = 160, height: int = 120,
                    dense_reward: bool = True, step_budget: int | None = None,
                    context: str = "spawn", **env_kwargs: Any) -> gym.vector.VectorEnv:
    """`num_envs` PokeGym environments stepped in parallel (AsyncVectorEnv), each in its own processes."""
    if num_envs < 1:
        raise ValueError(f"num_envs must be at least 1, got {num_envs}")
    return gym.make_vec(ENV_ID, num_envs=num_envs, vectorization_mode="async",
                        vector_kwargs={"context": context}, task_id=task_id, width=width, height=height,
                        dense_reward=dense_reward, step_budget=step_budget, **env_kwargs)
