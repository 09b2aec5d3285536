"""ObservedGame: the live game as everything in the studio that drives it sees it.

The episode runner, a person's keys and gamepad, Try it, the memory finder's walks, signature building and
verification all hold the pad through this one wrapper, so whatever drives:

* the pad being held shows in the Live view's overlay (`DriveMonitor.held`) and in the Memory tab's plot
  (`DriveMonitor.log`: a lockstep hold is over in milliseconds, too quick for a display timer to see);
* every hold is counted, and a drive that asked for it hears of each (Try it shows its progress);
* a cancelled drive's next hold raises DriveCancelled (a GameError: it ends like a failing game);
* a lockstep world can be paced: its time spaced out in wall-clock time so that a person can watch. Pacing
  holds the pad one tick at a time and waits between ticks until `rate` × wall-clock time has passed; the
  simulation is the same as an unpaced hold, so recordings stay deterministic.

Everything else is the wrapped game's. The studio owns the game, so close() does nothing here.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from core.audio.clip import AudioClip
from core.game.connection import GameConnection, StepResult
from core.game.errors import GameError
from core.game.pad import PadState

PadLog = deque[tuple[float, float, PadState]]


class _Ticked(Protocol):
    """What a lockstep game (the built-in world: external games run in real time) adds: steps in ticks."""

    def ticks_for(self, seconds: float) -> int: ...
    def hold_ticks(self, pad: PadState, ticks: int) -> StepResult: ...


class DriveCancelled(GameError):
    """The drive was cancelled by the user (Try it's Cancel, a restart): the hold was not made."""


@dataclass
class DriveMonitor:
    """What the studio knows of the driving, whoever drives: shared by every ObservedGame of one GameHost."""

    held: PadState | None = None  # the pad being held now (written by the drive thread, read by timers)
    log: PadLog = field(default_factory=lambda: deque(maxlen=256))  # (start, end, pad) of recent holds
    rate: float | None = None     # lockstep pacing: game seconds per wall-clock second (None: as fast as it runs)
    holds: int = 0                # holds made in the current drive
    on_hold: Callable[[int], None] | None = None  # told the count after each hold of the current drive
    cancelled: threading.Event = field(default_factory=threading.Event)   # the current drive's next hold raises
    unpaced: threading.Event = field(default_factory=threading.Event)     # the current drive finishes unpaced

    def begin_drive(self, on_hold: Callable[[int], None] | None = None) -> None:
        """A new drive starts on the drive thread: its own count, not cancelled, paced as set."""
        self.holds, self.on_hold = 0, on_hold
        self.cancelled.clear()
        self.unpaced.clear()


class ObservedGame:
    """A game (the built-in world or an external one) whose holds the studio sees; see the module docstring.
    Its pid is the process it was made for: after a restart, GameHost gives a new one."""

    def __init__(self, world: GameConnection, monitor: DriveMonitor) -> None:
        self._world = world
        self.monitor = monitor
        self._pid = world.pid

    def __getattr__(self, name: str) -> Any:
        return getattr(self._world, name)

    @property
    def world(self) -> GameConnection:
        return self._world

    @property
    def pid(self) -> int:
        return self._pid

    def close(self) -> None:
        """The studio's GameHost owns the game: a driver that closes what it drove leaves it running."""

    def audio_ticks(self, first_tick: int, last_tick: int) -> AudioClip:
        """The wrapped game's sound (what a recording stores with each step); reading it is not a hold."""
        return self._world.audio_ticks(first_tick, last_tick)

    def hold(self, pad: PadState, seconds: float) -> Any:
        return self._observed(pad, lambda: self._paced(pad, seconds))

    def hold_ticks(self, pad: PadState, ticks: int) -> Any:
        return self._observed(pad, lambda: cast(_Ticked, self._world).hold_ticks(pad, ticks))

    def _observed(self, pad: PadState, hold: Callable[[], Any]) -> Any:
        monitor = self.monitor
        if monitor.cancelled.is_set():
            raise DriveCancelled("cancelled by the user")
        monitor.held = pad
        started = time.monotonic()
        try:
            result = hold()
        finally:
            monitor.held = None
            monitor.log.append((started, time.monotonic(), pad))
        monitor.holds += 1
        if monitor.on_hold is not None:
            monitor.on_hold(monitor.holds)
        return result

    def _paced(self, pad: PadState, seconds: float) -> Any:
        world = self._world
        rate = self.monitor.rate
        if not rate or self.monitor.unpaced.is_set() or world.info.mode != "lockstep":
            return world.hold(pad, seconds)
        ticked = cast(_Ticked, world)  # lockstep: it steps in ticks
        ticks = ticked.ticks_for(seconds)
        tick_s = 1.0 / world.info.tick_hz
        anchor, anchor_tick = time.monotonic(), 0  # re-anchored when the rate changes mid-hold
        result = None
        for done in range(1, ticks + 1):
            result = ticked.hold_ticks(pad, 1)
            if not self.monitor.rate or self.monitor.unpaced.is_set():  # pacing off: the rest at full speed
                return ticked.hold_ticks(pad, ticks - done) if done < ticks else result
            if self.monitor.rate != rate:
                rate, anchor, anchor_tick = self.monitor.rate, time.monotonic(), done
            assert rate is not None
            self.monitor.unpaced.wait(max(0.0, anchor + (done - anchor_tick) * tick_s / rate - time.monotonic()))
        return result
