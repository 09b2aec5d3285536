"""Windows XInput (Xbox-compatible controllers) read into PadState. Format: docs/physical-gamepad.md.

The DLL is loaded on first use, so this module imports anywhere. The one call into it is
`xinput_get_state`; everything else (struct to PadState, disconnects) takes a getter with the
same signature, so it is tested on any platform with structs built by the test.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable

from core.game.pad import Button, PadState
from core.game.physical_pad import (
    DEFAULT_DEAD_ZONE,
    GamepadError,
    GamepadGone,
    GamepadInfo,
    PhysicalPad,
    apply_dead_zone,
)

XUSER_MAX_COUNT = 4
ERROR_SUCCESS = 0
ERROR_DEVICE_NOT_CONNECTED = 1167
_DLL_NAMES = ("xinput1_4.dll", "xinput1_3.dll", "xinput9_1_0.dll")

# wButtons bits. Guide and the stick clicks have no Button and are ignored.
XINPUT_BUTTONS = {
    0x0001: Button.DPAD_UP, 0x0002: Button.DPAD_DOWN, 0x0004: Button.DPAD_LEFT, 0x0008: Button.DPAD_RIGHT,
    0x0010: Button.PLUS,  # START
    0x0020: Button.MINUS,  # BACK
    0x0100: Button.L, 0x0200: Button.R,  # shoulders
    0x1000: Button.A, 0x2000: Button.B, 0x4000: Button.X, 0x8000: Button.Y,
}
_TRIGGER_PRESSED = 128  # past half of 0..255


class XINPUT_GAMEPAD(ctypes.Structure):  # the Win32 names
    _fields_ = [
        ("wButtons", ctypes.c_uint16),
        ("bLeftTrigger", ctypes.c_uint8),
        ("bRightTrigger", ctypes.c_uint8),
        ("sThumbLX", ctypes.c_int16),
        ("sThumbLY", ctypes.c_int16),
        ("sThumbRX", ctypes.c_int16),
        ("sThumbRY", ctypes.c_int16),
    ]


class XINPUT_STATE(ctypes.Structure):
    _fields_ = [("dwPacketNumber", ctypes.c_uint32), ("Gamepad", XINPUT_GAMEPAD)]


# (user index, state to fill) -> Win32 error code, like XInputGetState.
StateGetter = Callable[[int, XINPUT_STATE], int]


@functools.lru_cache(maxsize=1)
def _xinput_get_state_function() -> Callable[..., int]:
    failures: list[str] = []
    for dll_name in _DLL_NAMES:
        try:
            dll = getattr(ctypes, "WinDLL")(dll_name)  # noqa: B009 - typeshed declares WinDLL on Windows only
        except (OSError, AttributeError) as exc:
            failures.append(f"{dll_name}: {exc}")
            continue
        function = dll.XInputGetState
        function.argtypes = [ctypes.c_uint32, ctypes.POINTER(XINPUT_STATE)]
        function.restype = ctypes.c_uint32
        return function
    raise GamepadError(
        "XInput is not available, so no controller can be read (" + "; ".join(failures) + "). "
        "On Windows 7 install the DirectX End-User Runtime, which provides xinput1_3.dll"
    )


def xinput_get_state(index: int, state: XINPUT_STATE) -> int:
    """The only call into the DLL: fill `state` for user `index`, return the Win32 error code."""
    return int(_xinput_get_state_function()(index, ctypes.byref(state)))


def pad_state_from_xinput(gamepad: XINPUT_GAMEPAD, dead_zone: float = DEFAULT_DEAD_ZONE) -> PadState:
    """XInput's +y is already up, so nothing is inverted; triggers past half press ZL / ZR."""
    lx, ly = apply_dead_zone(_unit(gamepad.sThumbLX), _unit(gamepad.sThumbLY), dead_zone)
    rx, ry = apply_dead_zone(_unit(gamepad.sThumbRX), _unit(gamepad.sThumbRY), dead_zone)
    buttons = {button for bit, button in XINPUT_BUTTONS.items() if gamepad.wButtons & bit}
    if gamepad.bLeftTrigger >= _TRIGGER_PRESSED:
        buttons.add(Button.ZL)
    if gamepad.bRightTrigger >= _TRIGGER_PRESSED:
        buttons.add(Button.ZR)
    return PadState(left_x=lx, left_y=ly, right_x=rx, right_y=ry, buttons=frozenset(buttons))


def _unit(raw: int) -> float:
    return max(-1.0, min(1.0, raw / 32767))


def _name(index: int) -> str:
    return f"XInput controller {index + 1}"  # XInput exposes no product names


def find_xinput_pads(get_state: StateGetter = xinput_get_state) -> list[GamepadInfo]:
    found: list[GamepadInfo] = []
    for index in range(XUSER_MAX_COUNT):
        code = get_state(index, XINPUT_STATE())
        if code == ERROR_SUCCESS:
            found.append(GamepadInfo(path=None, index=index, name=_name(index)))
        elif code != ERROR_DEVICE_NOT_CONNECTED:
            raise GamepadError(f"XInputGetState({index}) failed with Windows error {code}")
    return found


class XInputPad(PhysicalPad):
    """XInput user slot `info.index` (0-3)."""

    def __init__(
        self, info: GamepadInfo, *, dead_zone: float = DEFAULT_DEAD_ZONE, get_state: StateGetter = xinput_get_state
    ) -> None:
        if not 0 <= info.index < XUSER_MAX_COUNT:
            raise GamepadError(f"XInput user index must be 0-{XUSER_MAX_COUNT - 1}, got {info.index}")
        super().__init__(info, _name(info.index), dead_zone)
        self._get_state = get_state
        self._closed = False
        self._packet: int | None = None
        self._last = PadState()
        self.poll()  # raises GamepadGone now if nothing is connected in that slot

    def poll(self) -> PadState:
        if self._closed:
            raise GamepadError(f"the gamepad {self.name!r} is closed")
        state = XINPUT_STATE()
        code = self._get_state(self.info.index, state)
        if code == ERROR_DEVICE_NOT_CONNECTED:
            raise GamepadGone(
                f"the gamepad {self.name!r} is not connected (unplugged, out of battery or switched off). "
                "Reconnect it and open it again"
            )
        if code != ERROR_SUCCESS:
            raise GamepadError(f"XInputGetState({self.info.index}) failed with Windows error {code}")
        if state.dwPacketNumber != self._packet:  # unchanged packet number: same input as last time
            self._packet = state.dwPacketNumber
            self._last = pad_state_from_xinput(state.Gamepad, self.dead_zone)
        return self._last

    def close(self) -> None:
        self._closed = True  # XInput holds nothing open
