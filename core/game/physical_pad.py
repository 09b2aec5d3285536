"""Physical game controllers on the user's machine, read as PadState so a human can drive the game.

Qt has no gamepad module in PySide6-Essentials and SDL is not a dependency, so the operating
system is read directly: the Linux joystick API (`/dev/input/js*`, physical_pad_linux.py) and
XInput on Windows (physical_pad_windows.py). Both give the same PhysicalPad: `poll()` returns
the current PadState without ever blocking. Finding and opening one is gamepad_devices.py's job,
so the platform modules import this one and nothing imports them back (no import circle).
Format and mapping: docs/physical-gamepad.md.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from core.game.pad import PadState

# Stick deflection (fraction of full) that reads as exactly 0, so a resting stick never drifts.
DEFAULT_DEAD_ZONE = 0.15


class GamepadError(RuntimeError):
    """A physical gamepad cannot be found, opened or read; the message says what to do."""


class GamepadGone(GamepadError):
    """The gamepad disappeared (unplugged, powered off, or its stream ended)."""


@dataclass(frozen=True)
class GamepadInfo:
    """One controller found on this machine.

    On Linux `path` is the joystick device (e.g. /dev/input/js0) and `index` its number; on
    Windows `path` is None and `index` is the XInput user index 0-3.
    """

    path: Path | None = None
    index: int = 0
    name: str = "unknown joystick"


class PhysicalPad(ABC):
    """An open controller. `poll()` drains what the device sent and returns the current state."""

    def __init__(self, info: GamepadInfo, name: str, dead_zone: float) -> None:
        if not 0.0 <= dead_zone < 1.0:
            raise ValueError(f"dead_zone must be in [0, 1), got {dead_zone!r}")
        self.info = info
        self.name = name
        self.dead_zone = dead_zone

    @abstractmethod
    def poll(self) -> PadState:
        """The state now. Never blocks; raises GamepadGone once the device has disappeared."""

    @abstractmethod
    def close(self) -> None:
        """Release the device. Safe to call more than once."""

    def __enter__(self) -> PhysicalPad:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, {self.info.path or self.info.index})"


def apply_dead_zone(x: float, y: float, dead_zone: float) -> tuple[float, float]:
    """Radial dead zone: inside it the stick is exactly (0, 0); outside, the rest is rescaled to
    reach 1 at full deflection, and the magnitude is capped at 1 (square-gated sticks overshoot)."""
    magnitude = math.hypot(x, y)
    if magnitude <= dead_zone:
        return 0.0, 0.0
    scale = min(1.0, (magnitude - dead_zone) / (1.0 - dead_zone)) / magnitude
    return x * scale + 0.0, y * scale + 0.0  # + 0.0 turns -0.0 into 0.0
