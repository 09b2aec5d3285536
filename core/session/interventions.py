"""Interventions: a text hint in the next prompt, or a physical push (forced back, or turned round).

An automatic policy triggers one after k consecutive ineffective moves, detected from evaluator
samples that the agent never sees; a human can trigger one from the studio at any time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from core.game.pad import PadState

Kind = Literal["text", "push_back", "turn_around"]
Mode = Literal["none", "text", "physical"]  # an InterventionPolicy's: when the runner intervenes by itself
DEFAULT_HINT = ("You seem to be stuck: your last moves did not change your position. "
                "Look around and try a different direction.")
PHYSICAL: dict[str, tuple[tuple[PadState, float], ...]] = {
    "push_back": ((PadState(left_y=-1.0), 0.75),),        # forced 3 m backwards, relative to the camera
    "turn_around": ((PadState(right_x=1.0), 1.5),),       # camera turned 180 degrees
}


@dataclass(frozen=True)
class Intervention:
    step: int
    source: Literal["auto", "human"]
    kind: Kind
    params: dict[str, Any] = field(default_factory=dict[str, Any])

    def to_json(self) -> dict[str, Any]:
        return {"step": self.step, "source": self.source, "kind": self.kind, "params": self.params}


ProgressStatus = Literal["queued", "recorded", "delivered", "undelivered"]


@dataclass(frozen=True)
class InterventionProgress:
    """An intervention's progress, as the runner reports it: `recorded` with the step that carries it; a hint
    also `queued` (for_step: the step whose prompt will carry it) and `delivered` (a prompt carried it); and
    `undelivered` when the episode ended first."""

    intervention: Intervention
    status: ProgressStatus
    for_step: int | None = None

    def to_json(self) -> dict[str, Any]:
        data = {**self.intervention.to_json(), "status": self.status}
        return {**data, "for_step": self.for_step} if self.for_step is not None else data


@dataclass(frozen=True)
class InterventionPolicy:
    """`none`, `text` or `physical` (push back), triggered after `k` consecutive ineffective moves."""

    mode: Mode = "none"
    k: int = 3
    cooldown: int = 3

    def check(self, step: int, consecutive_im: int, last_intervention_step: int | None) -> Intervention | None:
        if self.mode == "none" or consecutive_im < self.k:
            return None
        if last_intervention_step is not None and step - last_intervention_step <= self.cooldown:
            return None
        if self.mode == "text":
            return Intervention(step, "auto", "text", {"hint": DEFAULT_HINT, "after_ims": consecutive_im})
        return Intervention(step, "auto", "push_back", {"after_ims": consecutive_im})

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "k": self.k, "cooldown": self.cooldown}
