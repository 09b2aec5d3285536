"""What the director hands the mixer for each tick: where the ears are, and what happened.

Times are (tick, offset): the sound starts `offset` samples into the audio of `tick` (the audio of tick t
is the time between game state t - 1 and game state t).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple


class Listener(NamedTuple):
    """The ears: at the character's head, facing the camera's heading (degrees, 0 north, counter-clockwise).
    A tuple: one is made every tick, and the mixer takes them as rows of numbers."""

    x: float
    y: float
    z: float
    yaw: float


@dataclass(frozen=True)
class Footstep:
    tick: int
    offset: int
    surface: str
    x: float
    y: float
    z: float
    level: float


@dataclass(frozen=True)
class Bump:
    tick: int
    offset: int
    material: str
    x: float
    y: float
    z: float
    level: float
    repeat: bool  # still pressing since the last bump, rather than a new contact


@dataclass(frozen=True)
class Speech:
    """A speaker starts babbling a line (cutting short whatever it said before)."""

    tick: int
    speaker: str
    x: float
    y: float
    z: float
    seconds: float


@dataclass(frozen=True)
class Hush:
    """The dialogue closed: the voice stops."""

    tick: int


@dataclass(frozen=True)
class Cue:
    tick: int
    name: str
    place: tuple[float, float, float] | None  # None: heard inside the head (the dialogue box)


SoundEvent = Footstep | Bump | Speech | Hush | Cue


def _no_events() -> list[SoundEvent]:
    # not default_factory=list[SoundEvent]: calling the alias costs a caught AttributeError, every tick
    return []


@dataclass(slots=True)
class TickSound:
    tick: int
    listener: Listener
    events: list[SoundEvent] = field(default_factory=_no_events)
