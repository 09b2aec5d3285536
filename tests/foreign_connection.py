"""ring_game (tests/targets/ring_game.c) as a GameConnection, for the privileged driver: test scaffolding over a real
process, as a backend is over a real game. It has no frames: its "frame" is a 1x1 picture keyed by its tick."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from core.game.connection import GameInfo, StepResult
from core.game.frames import Frame
from core.game.pad import PadState
from tests.foreign import TICK_HZ, ForeignGame


class RingConnection:
    def __init__(self, game: ForeignGame) -> None:
        self.game = game
        self.tick = 0
        self.info = GameInfo("ring_game", game.pid, "lockstep", TICK_HZ, 1, 1, ("spawn",), frozenset())

    @property
    def pid(self) -> int:
        return self.game.pid

    def latest_frame(self) -> Frame:
        return Frame(np.zeros((1, 1, 3), np.uint8), self.tick, self.tick)

    def _answer(self, tick: int) -> StepResult:
        self.tick = tick
        return StepResult(tick, tick)

    def hold(self, pad: PadState, seconds: float) -> StepResult:
        return self._answer(self.game.hold(pad, seconds))

    def reset(self, start_state: str | Mapping[str, Any]) -> StepResult:
        return self._answer(self.game.reset())

    def turn_camera(self, degrees: float) -> float:
        self._answer(self.game.turn(degrees))
        return degrees
