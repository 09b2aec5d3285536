"""Which physical controllers are connected, and opening one: the factory over the platform readers.

It sits above physical_pad.py (the shared base) and the two platform modules that build on it, so the
base never has to import its own subclasses. Format and mapping: docs/physical-gamepad.md.
"""

from __future__ import annotations

import os
import sys

from core.game.physical_pad import DEFAULT_DEAD_ZONE, GamepadError, GamepadInfo, PhysicalPad


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
