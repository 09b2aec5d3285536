"""`python main.py bench rl`: Gymnasium environment steps per second at 160x120, for 1 and 2 environments behind
AsyncVectorEnv, and the cost of an environment step against the same step timed inside the world process.
The scaling from 1 to 2 environments is also read against the machine's own: two worlds stepping at once
with no harness (`world_parallel_scaling`), since a virtual machine's 2 cores don't give 2x even to that;
and without pinning each environment to a CPU (`vector_scaling_ratio_unpinned`), what pinning is worth.

Every step is one of the four 0.5 s moves (15 ticks), so the in-process baseline (the world's `time_steps`
request: the same pads, the same ticks, no IPC, no evaluator, no frame copy) does exactly the same game work.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.agents.actions import ActionSet

MOVES = ("MoveForward", "MoveLeft", "MoveBackward", "MoveRight")
WIDTH, HEIGHT = 160, 120
TASK = "q08_site_navigation"
BLOCKS = 4  # interleaved blocks for the in-process comparison, so both sides see the same machine load


def _builtin_actions() -> ActionSet:
    """The built-in world's action set, whose moves every block steps through."""
    from core.backends.profile import load_backend

    return load_backend("builtin").action_set()


def _in_process_vs_env(steps: int) -> tuple[float, float]:
    """(seconds per env.step, seconds per step inside the world) on one environment, interleaved."""
    from core.session.gym_env import PokeGymEnv

    env = PokeGymEnv(TASK, width=WIDTH, height=HEIGHT, step_budget=10**9)
    try:
        actions = [env.actions.names.index(name) for name in MOVES]
        pads = [env.actions.discrete(name).macro[0][0].to_dict() for name in MOVES]
        ticks = env.world.ticks_for(env.actions.discrete(MOVES[0]).macro[0][1])
        env.reset(seed=0)
        for i in range(8):  # warm caches
            env.step(actions[i % 4])
        through = inside = 0.0
        for _ in range(BLOCKS):
            env.reset(seed=0)
            started = time.perf_counter()
            for i in range(steps):
                env.step(actions[i % 4])
            through += time.perf_counter() - started
            env.reset(seed=0)
            inside += env.world.time_steps([pads[i % 4] for i in range(steps)], ticks)
    finally:
        env.close()
    return through / (BLOCKS * steps), inside / (BLOCKS * steps)


def _vector_steps_per_s(steps: int) -> dict[tuple[int, bool], float]:
    """Environment steps per second (all environments together) through AsyncVectorEnv with 1 and with 2
    environments, each pinned to CPUs (the default) and not: {(count, pinned): steps/s}. All four stay open
    and are timed in alternating blocks, so a shared machine's changing load falls on each alike (an idle
    environment's evaluator samples at 5 Hz, nothing to speak of)."""
    import numpy as np

    from core.session.vector_env import make_vector_env

    names = _builtin_actions().names
    actions = [names.index(name) for name in MOVES]  # the environments' action indices
    vectors = {(count, pinned): make_vector_env(count, TASK, WIDTH, HEIGHT, step_budget=10**9, pin_cpus=pinned)
               for count in (1, 2) for pinned in (True, False)}
    seconds = dict.fromkeys(vectors, 0.0)
    try:
        for (count, _), envs in vectors.items():
            envs.reset(seed=0)
            for i in range(8):
                envs.step(np.full(count, actions[i % 4]))
        for _ in range(BLOCKS):
            for (count, pinned), envs in vectors.items():
                started = time.perf_counter()
                for i in range(steps):
                    envs.step(np.full(count, actions[i % 4]))
                seconds[count, pinned] += time.perf_counter() - started
    finally:
        for envs in vectors.values():
            envs.close()
    return {key: key[0] * BLOCKS * steps / spent for key, spent in seconds.items()}


def _world_parallel_scaling(steps: int) -> float:
    """How much more two worlds step than one on this machine with no harness at all: the same moves timed
    inside each world process (`time_steps`), one world alone, then two at once, in interleaved blocks. It is
    the ceiling `vector_scaling_ratio` is read against: what the cores give this work at this moment (a
    virtual machine's 2 cores gave two busy processes 1.66x to 1.95x here, from one minute to the next)."""
    from concurrent.futures import ThreadPoolExecutor

    from core.game.builtin import BuiltinWorld

    actions = _builtin_actions()
    worlds = [BuiltinWorld.launch(width=WIDTH, height=HEIGHT, renderer="software") for _ in range(2)]
    try:
        ticks = worlds[0].ticks_for(actions.discrete(MOVES[0]).macro[0][1])
        pads = [actions.discrete(MOVES[i % 4]).macro[0][0].to_dict() for i in range(steps)]
        alone = together = 0.0

        def play(world: BuiltinWorld) -> float:
            return world.time_steps(pads, ticks)

        with ThreadPoolExecutor(2) as pool:
            list(pool.map(play, worlds))  # warm both
            for _ in range(BLOCKS):
                started = time.perf_counter()
                worlds[0].time_steps(pads, ticks)
                alone += time.perf_counter() - started
                started = time.perf_counter()
                list(pool.map(play, worlds))
                together += time.perf_counter() - started
    finally:
        for world in worlds:
            world.close()
    return 2 * alone / together


def bench_rl(args: argparse.Namespace, emit: Callable[..., Any]) -> None:
    steps = args.steps
    per_env_step, per_world_step = _in_process_vs_env(steps)
    ceiling = _world_parallel_scaling(steps)
    rates = _vector_steps_per_s(steps)
    one, two = rates[1, True], rates[2, True]
    one_unpinned, two_unpinned = rates[1, False], rates[2, False]
    ceiling = (ceiling + _world_parallel_scaling(steps)) / 2  # before and after: the load moves meanwhile
    emit(args, "env_steps_per_s_1_env", one, "steps/s", 1.0 / per_world_step, "in_process_steps_per_s")
    emit(args, "env_steps_per_s_2_envs", two, "steps/s", one, "env_steps_per_s_1_env")
    emit(args, "vector_scaling_ratio", two / one, "ratio", one, "env_steps_per_s_1_env", ratio=two / one)
    emit(args, "vector_scaling_ratio_unpinned", two_unpinned / one_unpinned, "ratio", one_unpinned,
         "env_steps_per_s_1_env_unpinned", ratio=two_unpinned / one_unpinned)
    emit(args, "world_parallel_scaling", ceiling, "ratio", 1.0, "one_world_alone", ratio=ceiling)
    emit(args, "vector_scaling_over_world_scaling", (two / one) / ceiling, "ratio", ceiling,
         "world_parallel_scaling", ratio=(two / one) / ceiling)
    emit(args, "env_step_ms", per_env_step * 1000, "ms", per_world_step * 1000, "in_process_step_ms")
    emit(args, "env_step_overhead_ratio", per_env_step / per_world_step, "ratio", per_world_step * 1000,
         "in_process_step_ms", ratio=per_env_step / per_world_step)
    emit(args, "vector_step_overhead_ratio", (1.0 / one) / per_world_step, "ratio", per_world_step * 1000,
         "in_process_step_ms", ratio=(1.0 / one) / per_world_step)
