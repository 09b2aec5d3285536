"""The step protocol, shared by the runner, the scripted driver and the Gymnasium env.

    start(success)  set the task and read where the episode starts
    begin()         read the game's tick before a step acts: the step's tick_before
    ... act: hold pad input, turn the camera; the game answers with the tick it stopped at ...
    end(answer)     the evaluator sample for the step that ended at that tick
    judge(sample, n, source)
                    the evaluator judges the task on that sample, the end of an acting step (agent,
                    privileged driver or human); nothing else is ever judged, so an intervention's push
                    between steps cannot meet the condition by itself

A sample is keyed by the game's own tick, not the wall clock: "the sample for the step that ended at
tick T" is the first sample whose tick is T or later. That needs the game's answers and the state block
the evaluator reads to share a clock, which a game says with Capability.STATE_TICK (the built-in world:
both are its simulation tick). For other games (a captured window's frame count is not the game's own
counter, and a finder-made profile may read no tick at all) the key falls back to the wall clock: the
first sample read after the game answered. The episode's first reading, just after a reset turned the
clock back, is always keyed by the wall clock. Real-time games that need time to show an input's effect
get `settle_s` before the step's tick is taken.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.evaluation.client import EvaluatorClient
from core.evaluation.sample import StateSample
from core.game.connection import Capability, GameConnection, StepResult


@dataclass(frozen=True)
class StepEnd:
    """Where a step ended: the game's tick, and the wall clock when the game answered (the fallback key)."""

    tick: int
    time: float


def current_tick(game: GameConnection) -> int:
    """The tick of the game's newest frame, read from the frame ring's header without copying the pixels."""
    view_of = getattr(game, "latest_frame_view", None)
    if view_of is not None:
        return int(view_of().frame.tick)
    return int(game.latest_frame().tick)


class StepProtocol:
    def __init__(self, game: GameConnection, evaluator: EvaluatorClient, settle_s: float = 0.0) -> None:
        self.game, self.evaluator, self.settle_s = game, evaluator, settle_s
        self.by_tick = Capability.STATE_TICK in game.info.capabilities

    def start(self, success: Mapping[str, Any]) -> StateSample:
        """Set the task (no step yet) and return where the episode starts. A reset turns the game's clock back,
        so this one reading is keyed by the wall clock: a sample read before the reset may carry a later tick."""
        self.evaluator.set_task(dict(success))
        return self.evaluator.sample_after(time.time())

    def begin(self) -> int:
        """The game's tick before the next step acts (its tick_before)."""
        return current_tick(self.game)

    def judge(self, sample: StateSample, step: int, source: str) -> bool:
        """Whether the task has succeeded, judged on `sample`, the end of acting step `step` by `source`."""
        return self.evaluator.judge(sample, step, source)

    def end(self, answer: StepResult | None = None, settle: bool = True) -> StateSample:
        """The sample for the step the game just finished (`answer`: its reply to the last input, if any)."""
        if settle and self.settle_s > 0:
            time.sleep(self.settle_s)  # a real-time game's state trails the input by a few frames
            answer = None  # the game ran on while settling: key by where it is now
        tick = answer.tick if answer is not None else current_tick(self.game)
        return self.sample_for(StepEnd(tick, time.time()))

    def sample_now(self) -> StateSample:
        return self.sample_for(StepEnd(current_tick(self.game), time.time()))

    def sample_for(self, end: StepEnd) -> StateSample:
        return self.evaluator.sample_for(end.tick if self.by_tick else None, end.time)
