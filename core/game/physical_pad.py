"""Physical game controllers on the user's machine, read as PadState so a human can drive the game.

Qt has no gamepad module in PySide6-Essentials and SDL is not a dependency, so the operating
system is read directly: the Linux joystick API (`/dev/input/js*`, physical_pad_linux.py) and
XInput on Windows (physical_pad_windows.py). Both give the same PhysicalPad: `poll()` returns
the current PadState without ever blocking. Format and mapping: docs/physical-gamepad.md.
"""

from __future__ import annotations

import math
import os
import sys
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


def find_gamepads(device_dir: str | os.PathLike[str] | None = None) -> list[GamepadInfo]:
    """Controllers connected now, first one first ([] when there are none).

    `device_dir` (default /dev/input) is where Linux joystick devices `js<N>` are looked for;
    passing it scans that directory on any platform. Raises GamepadError on a platform with no
    supported interface, or when XInput cannot be loaded on Windows.
    """
    if device_dir is not None or sys.platform.startswith("linux"):
        from core.game import physical_pad_linux

        return physical_pad_linux.find_joysticks(device_dir)
    if sys.platform == "win32":
        from core.game import physical_pad_windows

        return physical_pad_windows.find_xinput_pads()
    raise GamepadError(
        f"reading a physical gamepad is not supported on {sys.platform} (only Linux and Windows); "
        "use the keyboard to take control instead"
    )


def open_gamepad(
    info: GamepadInfo | None = None,
    *,
    device_dir: str | os.PathLike[str] | None = None,
    dead_zone: float = DEFAULT_DEAD_ZONE,
) -> PhysicalPad | None:
    """Open `info`, or the first controller find_gamepads(device_dir) reports (None if there is none).

    Raises GamepadError when the device cannot be opened (for example no permission to read it)
    and GamepadGone when it disappeared between being found and being opened.
    """
    if info is None:
        found = find_gamepads(device_dir)
        if not found:
            return None
        info = found[0]
    if info.path is not None:
        from core.game.physical_pad_linux import JoystickPad

        return JoystickPad(info, dead_zone=dead_zone)
    from core.game.physical_pad_windows import XInputPad

    return XInputPad(info, dead_zone=dead_zone)
