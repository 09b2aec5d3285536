"""A Gymnasium environment for the built-in world (extra `rl`), with an optional dense reward.

Observations are RGB frames; actions index the profile's discrete action set. The dense reward
(the paper lists reward design as future work) is: metres of progress toward the goal point,
plus 1 for each success-relevant flag that becomes set, plus 10 on success. Reward comes from
evaluator samples; the observation never does.
"""

from __future__ import annotations

import math
import time
from typing import Any

import gymnasium as gym
import numpy as np

from core.agents.actions import ActionSet
from core.evaluation.client import EvaluatorClient
from core.evaluation.conditions import flags_named
from core.evaluation.profile import load_profile
from core.evaluation.tasks import Task, load_task
from core.game.builtin import BuiltinWorld
from core.paths import PROFILES_DIR, TASKS_DIR
from core.session.runner import goal_point

SUCCESS_BONUS = 10.0
FLAG_BONUS = 1.0


class PokeGymEnv(gym.Env):
    metadata = {"render_modes": ["rgb_array"], "render_fps": 2}

    def __init__(self, task_id: str = "q08_site_navigation", dense_reward: bool = True, width: int = 160,
                 height: int = 90, step_budget: int | None = None, render_mode: str | None = "rgb_array") -> None:
        profile = load_profile(PROFILES_DIR / "builtin_world.yaml")
        self.actions = ActionSet.from_profile_data(profile.actions)
        self.task: Task = load_task(TASKS_DIR / f"{task_id}.yaml", profile.flags)
        self.flag_bits = {name: i for i, name in enumerate(profile.flags)}
        self.dense_reward = dense_reward
        self.step_budget = step_budget or self.task.step_budget
        self.render_mode = render_mode
        self.world = BuiltinWorld.launch(width=width, height=height, renderer="software")
        self.evaluator = EvaluatorClient.launch(self.world.pid)
        self.evaluator.wait_locked()
        self.observation_space = gym.spaces.Box(0, 255, (height, width, 3), np.uint8)
        self.action_space = gym.spaces.Discrete(len(self.actions.names))
        self._goal = goal_point(self.task)
        self._relevant = [self.flag_bits[f] for f in sorted(flags_named(self.task.success))]
        self._steps = 0
        self._distance: float | None = None
        self._flags = 0

    def _observe(self) -> np.ndarray:
        return self.world.latest_frame().pixels

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.world.reset(self.task.start_for_reset())
        self.evaluator.set_task(self.task.success.model_dump(exclude_none=True), step=0)
        sample = self.evaluator.sample_after(time.time())
        self._steps, self._flags = 0, sample.flags
        self._distance = self._goal_distance(sample.x, sample.y)
        return self._observe(), {"step": 0}

    def _goal_distance(self, x: float, y: float) -> float | None:
        return None if self._goal is None else math.hypot(x - self._goal[0], y - self._goal[1])

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        if not self.action_space.contains(action):
            raise ValueError(f"action must be an integer in [0, {self.action_space.n}), got {action!r}")
        chosen = self.actions.discrete(self.actions.names[int(action)])
        self._steps += 1
        self.evaluator.mark_step(self._steps)
        for pad, seconds in chosen.macro:
            self.world.hold(pad, seconds)
        sample = self.evaluator.sample_after(time.time())
        success = bool(self.evaluator.successes)
        reward = SUCCESS_BONUS if success else 0.0
        if self.dense_reward:
            distance = self._goal_distance(sample.x, sample.y)
            if distance is not None and self._distance is not None:
                reward += self._distance - distance
            self._distance = distance
            newly = sample.flags & ~self._flags
            reward += FLAG_BONUS * sum(1 for bit in self._relevant if newly >> bit & 1)
        self._flags = sample.flags
        truncated = not success and self._steps >= self.step_budget
        return self._observe(), float(reward), success, truncated, {"step": self._steps, "action": chosen.name}

    def render(self) -> np.ndarray | None:
        return self._observe() if self.render_mode == "rgb_array" else None

    def close(self) -> None:
        self.evaluator.close()
        self.world.close()


if "PokeGym/Harborvale-v0" not in gym.registry:
    gym.register(id="PokeGym/Harborvale-v0", entry_point="core.session.gym_env:PokeGymEnv")
