"""How an episode is run: the instruction's granularity, the action paradigm, what the agent observes,
interventions, the step budget and the seed; recorded whole in the episode's metadata."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.agents.observe import ObservationOptions
from core.game.motion import MotionCalibration
from core.session.interventions import InterventionPolicy


@dataclass
class RunOptions:
    granularity: str = "goal_only"
    paradigm: str = "discrete"
    observation: ObservationOptions = field(default_factory=ObservationOptions)
    interventions: InterventionPolicy = field(default_factory=InterventionPolicy)
    step_budget: int | None = None
    privileged: bool = False
    seed: int = 0
    frame_every_ticks: int = 0  # also record continuous frames every N ticks (0 = off), for smooth replay
    settle_s: float = 0.0  # real-time games: wait this long after an action before it is judged
    motion: MotionCalibration | None = None  # the backend's continuous-control calibration (the IM threshold)
    # What the game's positions are in (its memory profile's `units`), for plots and texts people read; it
    # goes into the episode's metadata (`position_units`), not into the options recorded there.
    position_units: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"granularity": self.granularity, "paradigm": self.paradigm,
                "observation": self.observation.to_json(), "interventions": self.interventions.to_json(),
                "step_budget": self.step_budget, "privileged": self.privileged, "seed": self.seed,
                "frame_every_ticks": self.frame_every_ticks, "settle_s": self.settle_s,
                "continuous_motion": self.motion.model_dump() if self.motion is not None else None}
