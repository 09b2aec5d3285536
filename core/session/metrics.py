"""The paper's metrics, from per-step records and evaluator samples (definitions: docs/metrics.md).

* An **ineffective move** (IM) is a movement action after which the character moved less than
  IM_EPSILON_M metres in the ground plane.
* A **deadlock span** is a run of at least DEADLOCK_K consecutive IMs (other actions in between,
  such as camera turns, neither break nor extend a span).
* A span is **recovered** if an effective movement follows it before the episode ends.
* The **failure category** suggestion: Success; Aware Deadlock if the agent said "stuck" during
  the final, unrecovered deadlock; Unaware Deadlock if it did not; Execution Failure if it reached
  the goal area but the task still failed; otherwise Lost.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

IM_EPSILON_M = 0.1
DEADLOCK_K = 3

SUCCESS = "Success"
AWARE = "Aware Deadlock"
UNAWARE = "Unaware Deadlock"
LOST = "Lost"
EXECUTION = "Execution Failure"
CATEGORIES = (SUCCESS, UNAWARE, AWARE, LOST, EXECUTION)


@dataclass(frozen=True)
class StepFacts:
    action: str
    movement: bool
    displacement: float
    self_assessment: str = "unsure"

    @property
    def ineffective(self) -> bool:
        return self.movement and self.displacement < IM_EPSILON_M


@dataclass(frozen=True)
class Span:
    start: int  # index of the first IM step
    end: int    # index of the last IM step
    recovered: bool


@dataclass(frozen=True)
class EpisodeMetrics:
    steps: int
    success: bool
    movement_steps: int
    ineffective_moves: int
    im_rate: float
    max_consecutive_im: int
    deadlocks: tuple[Span, ...]
    recovery_rate: float | None
    action_entropy_bits: float
    failure_category: str

    def to_json(self) -> dict[str, object]:
        return {
            "steps": self.steps, "success": self.success, "movement_steps": self.movement_steps,
            "ineffective_moves": self.ineffective_moves, "im_rate": self.im_rate,
            "max_consecutive_im": self.max_consecutive_im,
            "deadlocks": [[s.start, s.end, s.recovered] for s in self.deadlocks],
            "recovery_rate": self.recovery_rate, "action_entropy_bits": self.action_entropy_bits,
            "failure_category": self.failure_category,
        }


def deadlock_spans(steps: Sequence[StepFacts], k: int = DEADLOCK_K) -> list[Span]:
    spans, run = [], []
    for index, step in enumerate(steps):
        if not step.movement:
            continue
        if step.ineffective:
            run.append(index)
            continue
        if len(run) >= k:
            spans.append(Span(run[0], run[-1], recovered=True))
        run = []
    if len(run) >= k:
        spans.append(Span(run[0], run[-1], recovered=False))
    return spans


def max_consecutive_im(steps: Sequence[StepFacts]) -> int:
    best = current = 0
    for step in steps:
        if not step.movement:
            continue
        current = current + 1 if step.ineffective else 0
        best = max(best, current)
    return best


def current_consecutive_im(steps: Sequence[StepFacts]) -> int:
    """The run of ineffective moves the episode is in right now (0 after an effective move)."""
    count = 0
    for step in reversed(steps):
        if not step.movement:
            continue
        if not step.ineffective:
            break
        count += 1
    return count


def action_entropy(actions: Sequence[str]) -> float:
    counts = Counter(actions)
    total = sum(counts.values())
    return -sum(c / total * math.log2(c / total) for c in counts.values()) if total else 0.0


def failure_category(steps: Sequence[StepFacts], success: bool, reached_goal_area: bool,
                     spans: Sequence[Span] | None = None) -> str:
    if success:
        return SUCCESS
    spans = deadlock_spans(steps) if spans is None else spans
    final = spans[-1] if spans and not spans[-1].recovered else None
    if final is not None:
        said = {steps[i].self_assessment for i in range(final.start, len(steps))}
        return AWARE if "stuck" in said else UNAWARE
    return EXECUTION if reached_goal_area else LOST


def episode_metrics(steps: Sequence[StepFacts], success: bool, reached_goal_area: bool = False) -> EpisodeMetrics:
    spans = deadlock_spans(steps)
    movement = sum(s.movement for s in steps)
    ims = sum(s.ineffective for s in steps)
    return EpisodeMetrics(
        steps=len(steps), success=success, movement_steps=movement, ineffective_moves=ims,
        im_rate=ims / movement if movement else 0.0, max_consecutive_im=max_consecutive_im(steps),
        deadlocks=tuple(spans),
        recovery_rate=sum(s.recovered for s in spans) / len(spans) if spans else None,
        action_entropy_bits=action_entropy([s.action for s in steps]),
        failure_category=failure_category(steps, success, reached_goal_area, spans),
    )


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Pearson's r, or None when either side has no variance (or fewer than two points)."""
    if len(xs) != len(ys) or len(xs) < 2:
        return None
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx == 0 or syy == 0:
        return None
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / math.sqrt(sxx * syy)
