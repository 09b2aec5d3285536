"""The dense reward, one definition for the Gymnasium wrapper (core/session/gym_env.py) and the dataset
exporter (core/export/dataset.py).

The paper lists reward design as future work; ours is: metres of progress toward the task's goal
point, plus FLAG_BONUS for each success-relevant flag that becomes set, plus SUCCESS_BONUS on the
step that succeeds. It is a pure function of two evaluator readings (before and after a step), so
a recorded episode earns exactly what the live environment would have paid for the same readings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from core.evaluation.conditions import flags_named
from core.evaluation.tasks import Task

SUCCESS_BONUS = 10.0
FLAG_BONUS = 1.0


@dataclass(frozen=True)
class Reading:
    """What the reward looks at in one evaluator sample."""

    x: float
    y: float
    flags: int


@dataclass(frozen=True)
class RewardSpec:
    """What a task's reward needs: where its goal is and which flag bits count toward success."""

    goal: tuple[float, float] | None
    relevant_bits: tuple[int, ...]
    dense: bool = True

    @classmethod
    def for_task(cls, task: Task, profile_flags: list[str], dense: bool = True) -> RewardSpec:
        bits = {name: i for i, name in enumerate(profile_flags)}
        goal = task.goal_point()
        relevant = tuple(bits[f] for f in sorted(flags_named(task.success)))
        return cls(goal[:2] if goal is not None else None, relevant, dense)

    def goal_distance(self, reading: Reading) -> float | None:
        return None if self.goal is None else math.hypot(reading.x - self.goal[0], reading.y - self.goal[1])


def step_reward(spec: RewardSpec, before: Reading, after: Reading, success: bool) -> float:
    """The reward of one step that started at `before` and ended at `after`."""
    reward = SUCCESS_BONUS if success else 0.0
    if not spec.dense:
        return reward
    start, end = spec.goal_distance(before), spec.goal_distance(after)
    if start is not None and end is not None:
        reward += start - end
    newly = after.flags & ~before.flags
    reward += FLAG_BONUS * sum(1 for bit in spec.relevant_bits if newly >> bit & 1)
    return float(reward)
