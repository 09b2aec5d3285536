"""Virtual gamepads: /dev/uinput through python-evdev (Linux), ViGEm's X360 pad through vgamepad (Windows).

Both are created before the game starts, so the game (Ryujinx) sees the pad at boot. Stick values
are clamped to [-1, 1] once more right here: vgamepad passes floats straight to the driver, where
1.01 wraps round to full left (FACTS). Neither package is imported unless its device is chosen;
neither can be created on the CI machines (no /dev/uinput, not Windows), so these classes are
tested up to the call into the package (tests/core/game/external/test_ryujinx_fake.py).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from core.game.errors import GameStartError
from core.game.external.spec import DEFAULT_PAD_BUTTONS, Input
from core.game.pad import Button, PadState

PAD_NAME = "PokeGym Virtual Pad"
_AXIS_MAX = 32767


def clamp_unit(value: float) -> float:
    """[-1, 1], with NaN as 0: never a value a driver could wrap round."""
    if value != value:  # NaN
        return 0.0
    return max(-1.0, min(1.0, float(value)))


def axis_value(value: float) -> int:
    return round(clamp_unit(value) * _AXIS_MAX)


def _mapping(spec: Input) -> dict[Button, str]:
    return {**DEFAULT_PAD_BUTTONS, **spec.pad_buttons}


class UinputPad:
    """A virtual X360-like pad on /dev/uinput (SDL, and so Ryujinx, knows its vendor/product ids)."""

    description = "uinput virtual gamepad"
    _KEYS = {"A": "BTN_SOUTH", "B": "BTN_EAST", "X": "BTN_WEST", "Y": "BTN_NORTH", "LB": "BTN_TL", "RB": "BTN_TR",
             "LT": "BTN_TL2", "RT": "BTN_TR2", "START": "BTN_START", "BACK": "BTN_SELECT", "LS": "BTN_THUMBL",
             "RS": "BTN_THUMBR"}
    _HATS = {"DPAD_LEFT": ("ABS_HAT0X", -1), "DPAD_RIGHT": ("ABS_HAT0X", 1), "DPAD_UP": ("ABS_HAT0Y", -1),
             "DPAD_DOWN": ("ABS_HAT0Y", 1)}

    def __init__(self, spec: Input, evdev_module: Any = None, device_path: str = "/dev/uinput") -> None:
        if evdev_module is None:
            if not os.path.exists(device_path):
                raise GameStartError(f"{device_path} does not exist, so no virtual gamepad can be made here. Load "
                                     "the module (sudo modprobe uinput) and give your user access (a udev rule "
                                     "with GROUP=\"input\"), or use the xtest device for keyboard-and-mouse games")
            try:
                import evdev as evdev_module
            except ImportError:
                raise GameStartError("python-evdev is not installed: pip install evdev") from None
        self._evdev = evdev_module
        self._ecodes = evdev_module.ecodes
        self._mapping = _mapping(spec)
        self.turn_degrees_per_s = spec.turn_degrees_per_s
        e = self._ecodes
        absinfo = evdev_module.AbsInfo(value=0, min=-_AXIS_MAX, max=_AXIS_MAX, fuzz=16, flat=128, resolution=0)
        hat = evdev_module.AbsInfo(value=0, min=-1, max=1, fuzz=0, flat=0, resolution=0)
        capabilities = {
            e.EV_KEY: [getattr(e, name) for name in self._KEYS.values()],
            e.EV_ABS: [(e.ABS_X, absinfo), (e.ABS_Y, absinfo), (e.ABS_RX, absinfo), (e.ABS_RY, absinfo),
                       (e.ABS_HAT0X, hat), (e.ABS_HAT0Y, hat)],
        }
        try:
            self._device = evdev_module.UInput(capabilities, name=PAD_NAME, vendor=0x045E, product=0x028E,
                                               version=0x110)
        except (OSError, PermissionError) as exc:
            raise GameStartError(f"cannot create the uinput gamepad: {exc}. Your user needs write access to "
                                 f"{device_path} (a udev rule, or the input group)") from None
        self._held: set[str] = set()
        from core.game.external.ryujinx_input import uinput_pad_id

        self.ryujinx_id = uinput_pad_id(PAD_NAME)  # how Ryujinx (SDL2) will name this pad, if it is the only one

    def apply(self, pad: PadState) -> None:
        e, device = self._ecodes, self._device
        device.write(e.EV_ABS, e.ABS_X, axis_value(pad.left_x))
        device.write(e.EV_ABS, e.ABS_Y, -axis_value(pad.left_y))  # evdev: down is positive
        device.write(e.EV_ABS, e.ABS_RX, axis_value(pad.right_x))
        device.write(e.EV_ABS, e.ABS_RY, -axis_value(pad.right_y))
        wanted = {self._mapping[b] for b in pad.buttons if b in self._mapping}
        hats = {"ABS_HAT0X": 0, "ABS_HAT0Y": 0}
        for name in wanted & set(self._HATS):
            axis, value = self._HATS[name]
            hats[axis] = value
        for axis, value in hats.items():
            device.write(e.EV_ABS, getattr(e, axis), value)
        for name in sorted(set(self._KEYS) & (wanted | self._held)):
            down = name in wanted
            if down != (name in self._held):
                device.write(e.EV_KEY, getattr(e, self._KEYS[name]), int(down))
        self._held = wanted
        device.syn()

    def turn_camera(self, degrees: float) -> bool:
        return False  # a stick turns for a time, not by an angle: ExternalGame holds the right stick instead

    def begin_hold(self) -> object:
        return None

    def end_hold(self, token: object, pad: PadState, seconds: float) -> None:
        return None

    def release_all(self) -> None:
        self.apply(PadState())

    def held_codes(self) -> tuple[list[int], list[int]]:
        return [], []  # the kernel releases everything when the device's file closes, even on kill -9

    def close(self) -> None:
        try:
            self.release_all()
        finally:
            self._device.close()


class VgamepadPad:
    """ViGEm's virtual X360 pad through vgamepad (Windows; the ViGEmBus driver must be installed)."""

    description = "vgamepad X360 (ViGEm)"

    def __init__(self, spec: Input, vgamepad_module: Any = None) -> None:
        if vgamepad_module is None:
            try:
                import vgamepad as vgamepad_module
            except (ImportError, OSError) as exc:
                hint = ("install it with pip install vgamepad (this also installs the ViGEmBus driver)"
                        if sys.platform == "win32" else
                        "vgamepad needs Windows (ViGEmBus), or libevdev2 and /dev/uinput on Linux; on Linux "
                        "prefer the uinput device")
                raise GameStartError(f"vgamepad is not usable here ({exc}); {hint}") from None
        self._vg = vgamepad_module
        try:
            self._pad = vgamepad_module.VX360Gamepad()
        except Exception as exc:  # noqa: BLE001 - vgamepad raises bare exceptions when the driver is missing
            raise GameStartError(f"could not create the virtual X360 pad: {exc}. Is the ViGEmBus driver "
                                 "installed (it comes with pip install vgamepad on Windows)?") from None
        self._mapping = _mapping(spec)
        self.turn_degrees_per_s = spec.turn_degrees_per_s
        self._held: set[str] = set()

    def _button(self, name: str) -> Any:
        buttons = self._vg.XUSB_BUTTON
        table = {"A": "XUSB_GAMEPAD_A", "B": "XUSB_GAMEPAD_B", "X": "XUSB_GAMEPAD_X", "Y": "XUSB_GAMEPAD_Y",
                 "LB": "XUSB_GAMEPAD_LEFT_SHOULDER", "RB": "XUSB_GAMEPAD_RIGHT_SHOULDER",
                 "START": "XUSB_GAMEPAD_START", "BACK": "XUSB_GAMEPAD_BACK", "LS": "XUSB_GAMEPAD_LEFT_THUMB",
                 "RS": "XUSB_GAMEPAD_RIGHT_THUMB", "DPAD_UP": "XUSB_GAMEPAD_DPAD_UP",
                 "DPAD_DOWN": "XUSB_GAMEPAD_DPAD_DOWN", "DPAD_LEFT": "XUSB_GAMEPAD_DPAD_LEFT",
                 "DPAD_RIGHT": "XUSB_GAMEPAD_DPAD_RIGHT"}
        return getattr(buttons, table[name])

    def apply(self, pad: PadState) -> None:
        gamepad = self._pad
        gamepad.left_joystick_float(x_value_float=clamp_unit(pad.left_x), y_value_float=clamp_unit(pad.left_y))
        gamepad.right_joystick_float(x_value_float=clamp_unit(pad.right_x), y_value_float=clamp_unit(pad.right_y))
        wanted = {self._mapping[b] for b in pad.buttons if b in self._mapping}
        gamepad.left_trigger_float(value_float=1.0 if "LT" in wanted else 0.0)
        gamepad.right_trigger_float(value_float=1.0 if "RT" in wanted else 0.0)
        for name in sorted((wanted | self._held) - {"LT", "RT"}):
            if name in wanted:
                gamepad.press_button(button=self._button(name))
            else:
                gamepad.release_button(button=self._button(name))
        self._held = wanted
        gamepad.update()

    def turn_camera(self, degrees: float) -> bool:
        return False

    def begin_hold(self) -> object:
        return None

    def end_hold(self, token: object, pad: PadState, seconds: float) -> None:
        return None

    def release_all(self) -> None:
        self._pad.reset()
        self._pad.update()
        self._held = set()

    def held_codes(self) -> tuple[list[int], list[int]]:
        return [], []  # ViGEm removes the pad when our process's handle closes

    def close(self) -> None:
        self.release_all()
