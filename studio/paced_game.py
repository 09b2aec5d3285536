"""PacedGame: a lockstep game whose time is spaced out in wall-clock time, so that a person can watch.

In lockstep the world simulates a step's half second as fast as it can, so a fast agent plays an
episode faster than anyone can follow. Pacing holds the pad one tick at a time and waits between
ticks until `rate` × wall-clock time has passed. The simulation is the same as an unpaced hold
(holding a pad in pieces gives the same ticks: the runner relies on it for continuous frames), so
recordings stay deterministic; only the wall clock changes. The rate can change during an episode.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from core.game.builtin import BuiltinWorld
from core.game.pad import PadState

PACES = {"as fast as it runs": None, "0.5× real time": 0.5, "1× real time": 1.0, "2× real time": 2.0,
         "4× real time": 4.0}
DEFAULT_PACE = "1× real time"


class PacedGame:
    """Everything is the wrapped world's, except hold(), which is paced when `rate` is set."""

    def __init__(self, world: BuiltinWorld, rate: float | None) -> None:
        self._world = world
        self.rate = rate
        self._stopped = threading.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._world, name)

    def hold(self, pad: PadState, seconds: float) -> Any:
        rate = self.rate
        if not rate or self._stopped.is_set():
            return self._world.hold(pad, seconds)
        ticks = self._world.ticks_for(seconds)
        tick_s = 1.0 / self._world.info.tick_hz
        anchor, anchor_tick = time.monotonic(), 0  # re-anchored when the rate changes mid-hold
        result = None
        for done in range(1, ticks + 1):
            result = self._world.hold_ticks(pad, 1)
            if not self.rate or self._stopped.is_set():  # pacing switched off: the rest at full speed
                return self._world.hold_ticks(pad, ticks - done) if done < ticks else result
            if self.rate != rate:
                rate, anchor, anchor_tick = self.rate, time.monotonic(), done
            self._stopped.wait(max(0.0, anchor + (done - anchor_tick) * tick_s / rate - time.monotonic()))
        return result

    def stop_pacing(self) -> None:
        """Finish the hold in progress at full speed (the episode is stopping)."""
        self._stopped.set()
