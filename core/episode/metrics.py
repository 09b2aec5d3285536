"""The paper's per-episode metrics, from per-step facts (definitions and rationale: docs/metrics.md).

Only the agent's own actions are scored. Every step carries its source (agent, privileged driver,
human, intervention), the displacement caused by its own input, and any displacement an automatic
intervention added after it. Displacement that someone else caused is never credited to the agent:

* An **ineffective move** (IM) is an agent action that asked to move (a movement action, or a left
  stick past the dead zone) after which the character moved less than the step's threshold: ε =
  IM_EPSILON_M metres for discrete moves; for continuous control a share of what the same stick and
  duration move the character on open flat ground (the backend's calibration, core/episode/motion.py).
* A **dialogue move** is a move made while a dialogue box was open (the evaluator's dialogue_active
  before the step). Pushing the stick inside a dialogue moves nothing, so it is no evidence of a wall:
  dialogue moves count in the IM rate (the benchmark's own definition) but never form, extend or
  break a deadlock run; `im_rate_physical` leaves them out.
* A **run** of IMs is broken by an effective agent move, or by anything else that displaced the
  character by IM_EPSILON_M or more (a push-back, a human's steps). Other actions (camera turns,
  interactions, text hints, dialogue moves) neither break nor extend it.
* A **deadlock span** is a run of at least DEADLOCK_K IMs. It is **recovered** only when the agent's
  own effective move ends it; `ended_by` says who ended it ("agent", "intervention", "human") or
  None when it lasted to the end of the episode.
* A span's **awareness** comes from what the agent said about the steps of the span: "aware" if it
  said `stuck` at least once, "unaware" if it never did and said `progressing` in most of its
  replies, and "unclassified" otherwise (mostly unsure, missing or unreadable). An episode that ends
  in an unrecovered span is suggested as Aware, Unaware or Unclassified Deadlock accordingly; the
  unclassified ones are left for a human label.
* **Execution Failure** is suggested when the episode failed near its goal: it ended in a deadlock span
  within GOAL_AREA_M of the goal, or the agent pressed Interact there (a failed interaction at the right
  target); a final deadlock elsewhere is a Deadlock, and reaching the goal area without either is still
  an Execution Failure.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from core.step_sources import AGENT_SOURCES

METRICS_VERSION = 3
IM_EPSILON_M = 0.1
DEADLOCK_K = 3
GOAL_AREA_M = 3.0

SUCCESS = "Success"
AWARE = "Aware Deadlock"
UNAWARE = "Unaware Deadlock"
LOST = "Lost"
EXECUTION = "Execution Failure"
UNCLASSIFIED = "Unclassified Deadlock"
CATEGORIES = (SUCCESS, UNAWARE, AWARE, LOST, EXECUTION)  # what a human annotator can choose
SUGGESTIONS = (*CATEGORIES, UNCLASSIFIED)  # what the automatic rule can suggest

SPAN_AWARE, SPAN_UNAWARE, SPAN_UNCLASSIFIED = "aware", "unaware", "unclassified"
AWARENESS_CLASSES = (SPAN_AWARE, SPAN_UNAWARE, SPAN_UNCLASSIFIED)
INVALID_ACTION = "Invalid"  # an agent reply that gave no executable action


@dataclass(frozen=True)
class StepFacts:
    """What one step did, as the metrics need it."""

    action: str                       # the agent's action name (or binned stick directions), INVALID_ACTION, or
    movement: bool                    # what a human/intervention step did; movement: the agent asked to move
    displacement: float               # metres moved while this step's own input was held
    self_assessment: str = "missing"  # progressing | stuck | unsure | missing (agent steps only)
    source: str = "agent"             # agent | privileged | human | intervention
    external_displacement: float = 0.0  # metres an automatic intervention moved the character after this step
    intervention: bool = False        # an intervention (of any kind) was applied at this step
    step: int = 0                     # the 1-based step number (0: not given; then index + 1)
    epsilon: float = IM_EPSILON_M     # metres below which this move is ineffective (continuous: calibrated)
    dialogue: bool = False            # a dialogue box was open when the step began
    interact: bool = False            # the agent pressed Interact (the A button)
    position: tuple[float, float] | None = None  # where the step ended (None: unknown)

    @property
    def by_agent(self) -> bool:
        return self.source in AGENT_SOURCES

    @property
    def ineffective(self) -> bool:
        """The benchmark's IM: an agent move that moved the character less than its threshold."""
        return self.by_agent and self.movement and self.displacement < self.epsilon

    @property
    def effective_move(self) -> bool:
        return self.by_agent and self.movement and self.displacement >= self.epsilon

    @property
    def dialogue_move(self) -> bool:
        return self.by_agent and self.movement and self.dialogue

    @property
    def physical_im(self) -> bool:
        """An IM that says something about the world's geometry: not made inside a dialogue."""
        return self.ineffective and not self.dialogue

    @property
    def displaced_by(self) -> str | None:
        """Who else moved the character at this step by at least IM_EPSILON_M: "human", "intervention" or None."""
        if not self.by_agent and self.displacement >= IM_EPSILON_M:
            return "human" if self.source == "human" else "intervention"
        if self.external_displacement >= IM_EPSILON_M:
            return "intervention"
        return None


@dataclass(frozen=True)
class DeadlockSpan:
    """A deadlock span keyed by step numbers (first and last IM of the run, inclusive)."""

    start: int
    end: int
    ended_by: str | None          # "agent" (recovered), "intervention", "human", or None (lasted to the end)
    awareness: str                # aware | unaware | unclassified
    awareness_step: int | None    # the first step whose reply said "stuck"
    interventions: int            # interventions applied while the span lasted (hints included)

    @property
    def recovered(self) -> bool:
        return self.ended_by == "agent"

    def to_json(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "recovered": self.recovered, "ended_by": self.ended_by,
                "awareness": self.awareness, "awareness_step": self.awareness_step,
                "interventions": self.interventions}


@dataclass(frozen=True)
class EpisodeMetrics:
    steps: int
    agent_steps: int
    success: bool
    movement_steps: int
    ineffective_moves: int
    im_rate: float | None  # None: the episode had no movement action (no rate, not a perfect 0%)
    max_consecutive_im: int
    deadlocks: tuple[DeadlockSpan, ...]
    recovery_rate: float | None
    action_entropy_bits: float
    failure_category: str
    invalid_replies: int
    interventions: int
    dialogue_moves: int = 0
    dialogue_ims: int = 0

    @property
    def im_rate_physical(self) -> float | None:
        """IMs ÷ moves with the dialogue moves left out of both (None: no move outside a dialogue)."""
        moves = self.movement_steps - self.dialogue_moves
        return (self.ineffective_moves - self.dialogue_ims) / moves if moves else None

    def spans_by_awareness(self) -> dict[str, int]:
        counts = Counter(span.awareness for span in self.deadlocks)
        return {name: counts.get(name, 0) for name in AWARENESS_CLASSES}

    def to_json(self) -> dict[str, object]:
        ended = Counter(span.ended_by or "end" for span in self.deadlocks)
        return {
            "metrics_version": METRICS_VERSION, "steps": self.steps, "agent_steps": self.agent_steps,
            "success": self.success, "movement_steps": self.movement_steps,
            "ineffective_moves": self.ineffective_moves, "im_rate": self.im_rate,
            "im_rate_physical": self.im_rate_physical, "dialogue_moves": self.dialogue_moves,
            "dialogue_ims": self.dialogue_ims, "max_consecutive_im": self.max_consecutive_im,
            "deadlocks": [span.to_json() for span in self.deadlocks],
            "deadlock_spans": len(self.deadlocks), "spans_by_awareness": self.spans_by_awareness(),
            "spans_ended_by": {who: ended.get(who, 0) for who in ("agent", "intervention", "human", "end")},
            "recovery_rate": self.recovery_rate, "action_entropy_bits": self.action_entropy_bits,
            "failure_category": self.failure_category, "invalid_replies": self.invalid_replies,
            "interventions": self.interventions,
        }


def _step_number(steps: Sequence[StepFacts], index: int) -> int:
    return steps[index].step or index + 1


def _runs(steps: Sequence[StepFacts]) -> list[tuple[list[int], str | None, int]]:
    """Every run of IMs: (indices of its IMs, who ended it or None, index where it ended or len(steps))."""
    runs: list[tuple[list[int], str | None, int]] = []
    current: list[int] = []
    for index, step in enumerate(steps):
        if step.physical_im:
            current.append(index)
        elif step.effective_move:
            if current:
                runs.append((current, "agent", index))
            current = []
        displaced = step.displaced_by
        if displaced is not None and current:
            runs.append((current, displaced, index))
            current = []
        elif displaced is not None:
            current = []
    if current:
        runs.append((current, None, len(steps)))
    return runs


def _awareness(steps: Sequence[StepFacts], first_im: int, ended_at: int) -> tuple[str, int | None]:
    """What the agent said about the span. A reply assesses the moves made before it, so the replies
    that can speak about a span are those after its first IM, up to the one that ended it."""
    said = [(index, steps[index].self_assessment) for index in range(first_im + 1, min(ended_at + 1, len(steps)))
            if steps[index].by_agent]
    stuck = [index for index, assessment in said if assessment == "stuck"]
    if stuck:
        return SPAN_AWARE, _step_number(steps, stuck[0])
    progressing = sum(1 for _, assessment in said if assessment == "progressing")
    if said and progressing * 2 > len(said):
        return SPAN_UNAWARE, None
    return SPAN_UNCLASSIFIED, None


def deadlock_spans(steps: Sequence[StepFacts], k: int = DEADLOCK_K) -> list[DeadlockSpan]:
    spans: list[DeadlockSpan] = []
    for indices, ended_by, ended_at in _runs(steps):
        if len(indices) < k:
            continue
        awareness, awareness_step = _awareness(steps, indices[0], ended_at)
        interventions = sum(steps[i].intervention for i in range(indices[0], min(ended_at + 1, len(steps))))
        spans.append(DeadlockSpan(_step_number(steps, indices[0]), _step_number(steps, indices[-1]), ended_by,
                                  awareness, awareness_step, interventions))
    return spans


def max_consecutive_im(steps: Sequence[StepFacts]) -> int:
    return max((len(indices) for indices, _, _ in _runs(steps)), default=0)


def next_run_length(current: int, step: StepFacts) -> int:
    """The length of the IM run after `step`, given its length before (the one rule behind every count)."""
    if step.physical_im:
        current += 1
    elif step.effective_move:
        current = 0
    return 0 if step.displaced_by is not None else current


def consecutive_im_series(steps: Sequence[StepFacts]) -> list[int]:
    """The current run length after each step (what the live metrics bar and Replay show)."""
    series: list[int] = []
    current = 0
    for step in steps:
        current = next_run_length(current, step)
        series.append(current)
    return series


def action_entropy(actions: Sequence[str]) -> float:
    counts = Counter(actions)
    total = sum(counts.values())
    return -sum(c / total * math.log2(c / total) for c in counts.values()) if total else 0.0


@dataclass(frozen=True)
class GoalArea:
    """Where the task's goal is, for the Execution Failure rule: the goal's centre (a reach condition's, or
    the last interaction target's), and whether it is an interaction target (then pressing Interact within
    `radius` of it and failing is a failed interaction at the right target)."""

    x: float
    y: float
    interaction: bool = False
    radius: float = GOAL_AREA_M

    def contains(self, position: tuple[float, float] | None) -> bool:
        return position is not None and math.hypot(position[0] - self.x, position[1] - self.y) <= self.radius

    def to_json(self) -> dict[str, Any]:
        return {"x": self.x, "y": self.y, "interaction": self.interaction, "radius": self.radius}

    @classmethod
    def from_json(cls, data: Any) -> GoalArea | None:
        try:
            return cls(float(data["x"]), float(data["y"]), bool(data.get("interaction", False)),
                       float(data.get("radius", GOAL_AREA_M)))
        except (KeyError, TypeError, ValueError):
            return None


def _final_span_near_goal(steps: Sequence[StepFacts], span: DeadlockSpan, goal: GoalArea) -> bool:
    """The span's moves ended within the goal area (stuck on geometry next to the target)."""
    ends = [s.position for s in steps if span.start <= s.step <= span.end and s.by_agent and s.position is not None]
    return bool(ends) and goal.contains(ends[-1])


def _failed_interaction_at_goal(steps: Sequence[StepFacts], goal: GoalArea) -> bool:
    return goal.interaction and any(s.by_agent and s.interact and goal.contains(s.position) for s in steps)


def failure_category(steps: Sequence[StepFacts], success: bool, reached_goal_area: bool,
                     spans: Sequence[DeadlockSpan] | None = None, goal: GoalArea | None = None) -> str:
    """The automatic suggestion (docs/metrics.md). An Execution Failure near the goal comes before a final
    deadlock: being stuck on geometry next to the target, or interacting with the right target and failing,
    is failing to execute, whatever happened after."""
    if success:
        return SUCCESS
    steps = _numbered(steps)
    spans = deadlock_spans(steps) if spans is None else spans
    final = spans[-1] if spans and spans[-1].ended_by is None else None
    if goal is not None and ((final is not None and _final_span_near_goal(steps, final, goal))
                             or _failed_interaction_at_goal(steps, goal)):
        return EXECUTION
    if final is not None:
        return {SPAN_AWARE: AWARE, SPAN_UNAWARE: UNAWARE}.get(final.awareness, UNCLASSIFIED)
    return EXECUTION if reached_goal_area else LOST


def _numbered(steps: Sequence[StepFacts]) -> Sequence[StepFacts]:
    """The steps with their 1-based numbers filled in where a caller left them 0 (hand-made lists)."""
    if all(s.step for s in steps):
        return steps
    return [s if s.step else replace(s, step=index + 1) for index, s in enumerate(steps)]


def episode_metrics(steps: Sequence[StepFacts], success: bool, reached_goal_area: bool = False,
                    goal: GoalArea | None = None, judged: bool = True) -> EpisodeMetrics:
    """Every metric of one episode. `judged` False (a user's Stop): no failure category is suggested."""
    spans = deadlock_spans(steps)
    agent = [s for s in steps if s.by_agent]
    movement = sum(s.movement for s in agent)
    ims = sum(s.ineffective for s in agent)
    chosen = [s.action for s in agent if s.action != INVALID_ACTION]
    category = failure_category(steps, success, reached_goal_area, spans, goal) if judged or success else ""
    return EpisodeMetrics(
        steps=len(steps), agent_steps=len(agent), success=success, movement_steps=movement, ineffective_moves=ims,
        im_rate=ims / movement if movement else None, max_consecutive_im=max_consecutive_im(steps),
        deadlocks=tuple(spans),
        recovery_rate=sum(s.recovered for s in spans) / len(spans) if spans else None,
        action_entropy_bits=action_entropy(chosen), failure_category=category,
        invalid_replies=len(agent) - len(chosen), interventions=sum(s.intervention for s in steps),
        dialogue_moves=sum(s.dialogue_move for s in agent),
        dialogue_ims=sum(s.ineffective and s.dialogue for s in agent),
    )


# What an unjudged episode cannot know (nothing read where the character was, or whether a dialogue was open):
# null in its metrics, never 0, so no mean or table can count them as "no IMs" (docs/metrics.md).
NEEDS_POSITIONS = ("ineffective_moves", "im_rate", "im_rate_physical", "dialogue_moves", "dialogue_ims",
                   "max_consecutive_im", "deadlocks", "deadlock_spans", "spans_by_awareness", "spans_ended_by",
                   "recovery_rate")


def unjudged_metrics(steps: Sequence[StepFacts]) -> dict[str, object]:
    """The metrics of a free-play episode (no memory profile): what the actions alone tell (steps, moves asked
    for, action entropy, invalid replies, interventions); everything that needs positions is None, and so are
    success and the failure category."""
    counted = episode_metrics(steps, success=False, judged=False).to_json()
    counted.update({name: None for name in NEEDS_POSITIONS})
    counted.update(success=None, failure_category=None, judged=False)
    return counted


STICK_SECTORS = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")
DEFAULT_DEAD_ZONE = 0.15


def stick_sector(x: float, y: float, dead_zone: float = DEFAULT_DEAD_ZONE) -> str:
    """One of 8 compass sectors (N = stick pushed up, clockwise), or "idle" inside the dead zone."""
    if math.hypot(x, y) <= dead_zone:
        return "idle"
    angle = math.degrees(math.atan2(x, y)) % 360.0
    return STICK_SECTORS[int((angle + 22.5) // 45.0) % 8]


def continuous_facts(params: Mapping[str, Any], dead_zone: float = DEFAULT_DEAD_ZONE) -> tuple[str, bool]:
    """(entropy label, asked to move) of a continuous action: the binned directions of both sticks
    (8 sectors plus idle each), and whether the left stick left the dead zone. Camera-only is no move."""
    left = params.get("left_stick") or (0.0, 0.0)
    right = params.get("right_stick") or (0.0, 0.0)
    left_x, left_y, right_x, right_y = float(left[0]), float(left[1]), float(right[0]), float(right[1])
    label = f"L:{stick_sector(left_x, left_y, dead_zone)} R:{stick_sector(right_x, right_y, dead_zone)}"
    return label, math.hypot(left_x, left_y) > dead_zone
