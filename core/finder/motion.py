"""What the finder needs from a game, and the movement protocol it plays through the pad.

The finder drives the character itself with our own virtual pad, through the narrowest slice
of a GameConnection: its pid and `hold(pad, seconds)`. The built-in world, an external game
(Minetest under Xvfb) and the tests' foreign C target all offer that. Restarting, for
signatures that must survive a restart, goes through a `GameLauncher`: a callable that starts a
fresh game process and returns its connection (for the built-in world: BuiltinWorld.launch).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from core.game.pad import PadState


@runtime_checkable
class Drivable(Protocol):
    """The slice of GameConnection the finder uses."""

    @property
    def pid(self) -> int: ...

    def hold(self, pad: PadState, seconds: float) -> Any: ...


class Closable(Drivable, Protocol):
    def close(self) -> None: ...


GameLauncher = Callable[[], Closable]
Progress = Callable[[str, float, int], None]  # (what is happening, fraction done, candidates left)


class FinderCancelled(RuntimeError):
    """The user cancelled a search; nothing was changed anywhere."""


class FinderError(RuntimeError):
    """The search could not finish; the message says why and what to try."""


@dataclass(frozen=True)
class Step:
    name: str                      # turn, stand, forward, back, right, left
    kind: Literal["still", "moved"]
    pad: PadState
    seconds: float


@dataclass(frozen=True)
class MotionPlan:
    """Timings of the protocol. Defaults suit a character walking a few units per second; in a
    real-time game every hold takes that long on the wall clock."""

    move_seconds: float = 0.6
    turn_seconds: float = 0.35
    stand_seconds: float = 0.5
    settle_seconds: float = 0.4    # neutral pad after each step, so lagging copies catch up
    rounds: int = 3                # full rounds followed value by value, after the first filtering one
    camera_stick: float = 1.0

    def round_steps(self) -> list[Step]:
        """One round: turn only the camera, stand, walk forward along the camera, stand, walk back,
        strafe right, strafe left. Each round starts with the camera turned further."""
        neutral = PadState()
        return [
            Step("turn", "still", PadState(right_x=self.camera_stick), self.turn_seconds),
            Step("stand", "still", neutral, self.stand_seconds),
            Step("forward", "moved", PadState(left_y=1.0), self.move_seconds),
            Step("stand", "still", neutral, self.stand_seconds),
            Step("back", "moved", PadState(left_y=-1.0), self.move_seconds),
            Step("right", "moved", PadState(left_x=1.0), self.move_seconds),
            Step("left", "moved", PadState(left_x=-1.0), self.move_seconds),
        ]


class Pacer:
    """Progress reporting and cancellation between protocol steps."""

    def __init__(self, progress: Progress | None, cancel: threading.Event | None, total_steps: int) -> None:
        self.progress = progress
        self.cancel = cancel
        self.total = max(1, total_steps)
        self.done = 0

    def step(self, what: str, candidates: int) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise FinderCancelled("cancelled by the user")
        self.done += 1
        if self.progress is not None:
            self.progress(what, min(1.0, self.done / self.total), candidates)
