"""Two PokeGym environments behind gymnasium's AsyncVectorEnv: two worlds in their own processes, stepped in
parallel, and the same seed with the same actions giving the same observations and rewards."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("gymnasium", reason="install the rl extra")

from core.session.vector_env import make_vector_env
from tests.cli_process import command_line


def _worlds_of(pids: list[int]) -> dict[int, int]:
    """World processes started by the given processes: world pid -> its owner."""
    worlds = {}
    for entry in Path("/proc").iterdir():
        cmdline = command_line(int(entry.name)) if entry.name.isdigit() else None
        if cmdline and "core.world" in cmdline and "--owner-pid" in cmdline:
            parts = cmdline.split()
            owner = int(parts[parts.index("--owner-pid") + 1])
            if owner in pids:
                worlds[int(entry.name)] = owner
    return worlds


def _rollout(envs, seed: int, steps: int) -> list[tuple[list[str], list[float]]]:
    envs.reset(seed=seed)
    envs.action_space.seed(seed)
    trace = []
    for _ in range(steps):
        observations, rewards, _, _, _ = envs.step(envs.action_space.sample())
        trace.append(([hashlib.sha1(o.tobytes()).hexdigest() for o in observations], rewards.tolist()))
    return trace


def test_two_async_envs_are_two_worlds_stepped_in_parallel_and_seeding_is_reproducible():
    ours = os.sched_getaffinity(0)
    envs = make_vector_env(2, task_id="q08_site_navigation", step_budget=50)
    try:
        assert envs.num_envs == 2 and envs.observation_space.shape == (2, 120, 160, 3)
        owners = [process.pid for process in envs.processes]
        worlds = _worlds_of(owners)
        assert sorted(worlds.values()) == sorted(owners)  # one world per environment, in its own subprocess
        # Each environment keeps its subprocess and its world on a CPU of its own; the caller stays free
        # (gymnasium builds one environment in the caller's process, whose world must not pin the caller).
        assert os.sched_getaffinity(0) == ours
        if len(ours) > 1:
            for world, owner in worlds.items():
                assert len(os.sched_getaffinity(world)) == 1
                assert os.sched_getaffinity(world) == os.sched_getaffinity(owner)
            assert len({frozenset(os.sched_getaffinity(owner)) for owner in owners}) == 2

        first = _rollout(envs, seed=7, steps=8)
        again = _rollout(envs, seed=7, steps=8)
        assert first == again
        other = _rollout(envs, seed=8, steps=8)
        assert other != first  # another seed samples other actions, and the worlds show it
        # The two worlds are independent: different actions leave them in different places.
        assert any(hashes[0] != hashes[1] for hashes, _ in first)
        assert any(np.nonzero(rewards)[0].size for _, rewards in first)  # the dense reward arrives through the vector
    finally:
        envs.close()
    assert not _worlds_of(owners)  # closing ends every world


def test_vector_envs_with_audio_give_each_world_its_own_sound():
    envs = make_vector_env(2, audio=True, step_budget=5)
    try:
        observations, _ = envs.reset(seed=3)
        assert set(observations) == {"image", "audio"} and observations["audio"].shape[0] == 2
        forward = np.array([0, 0])  # MoveForward in both
        observations, _, _, _, infos = envs.step(forward)
        assert observations["audio"].dtype == np.int16 and observations["image"].shape[0] == 2
        assert all(frames > 0 for frames in infos["audio_frames"])
        assert all(np.abs(observations["audio"][i]).max() > 100 for i in range(2))  # both worlds made sound
    finally:
        envs.close()
