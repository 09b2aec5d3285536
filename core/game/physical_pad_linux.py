"""Linux joystick API (`/dev/input/js*`) read into PadState. Format: docs/physical-gamepad.md.

Each read returns whole `struct js_event` records (u32 time ms, s16 value, u8 type, u8 number);
the device is opened non-blocking and every poll drains all pending events. Axes and buttons are
mapped by the kernel event code each one carries (JSIOCGAXMAP / JSIOCGBTNMAP), so Xbox,
PlayStation and Switch Pro pads all land on the same PadState. Anything that is not a character
device (a FIFO in tests) gets the xpad (Xbox) numbering.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import struct
from pathlib import Path
from typing import NoReturn

from core.game.pad import Button, PadState
from core.game.physical_pad import (
    DEFAULT_DEAD_ZONE,
    GamepadError,
    GamepadGone,
    GamepadInfo,
    PhysicalPad,
    apply_dead_zone,
)

DEFAULT_DEVICE_DIR = Path("/dev/input")

JS_EVENT = struct.Struct("=IhBB")  # native byte order, as the kernel writes it
JS_EVENT_BUTTON, JS_EVENT_AXIS, JS_EVENT_INIT = 0x01, 0x02, 0x80


def _ior(nr: int, size: int) -> int:  # _IOR('j', nr, size) from <linux/joystick.h>
    return (2 << 30) | (size << 16) | (ord("j") << 8) | nr


_ABS_CNT, _KEYMAP_LEN = 0x40, 0x2FF - 0x100 + 1  # joydev's abspam[ABS_CNT], keypam[KEY_MAX - BTN_MISC + 1]
JSIOCGAXES, JSIOCGBUTTONS = _ior(0x11, 1), _ior(0x12, 1)
JSIOCGAXMAP, JSIOCGBTNMAP = _ior(0x32, _ABS_CNT), _ior(0x34, _KEYMAP_LEN * 2)
_NAME_LEN = 128
JSIOCGNAME = _ior(0x13, _NAME_LEN)

# Kernel ABS_* codes -> what they drive. Triggers and the hat become buttons.
_AXIS_ROLES = {0x00: "lx", 0x01: "ly", 0x03: "rx", 0x04: "ry", 0x02: "lt", 0x05: "rt",
               0x0A: "lt", 0x09: "rt", 0x10: "hat_x", 0x11: "hat_y"}  # ABS_BRAKE / ABS_GAS: triggers too
# Kernel BTN_* codes -> Button. Codes with no Button (guide, stick clicks) are ignored.
_BUTTON_CODES = {
    0x130: Button.A, 0x131: Button.B, 0x133: Button.X, 0x134: Button.Y,
    0x136: Button.L, 0x137: Button.R, 0x138: Button.ZL, 0x139: Button.ZR,
    0x13A: Button.MINUS, 0x13B: Button.PLUS,
    0x220: Button.DPAD_UP, 0x221: Button.DPAD_DOWN, 0x222: Button.DPAD_LEFT, 0x223: Button.DPAD_RIGHT,
    # xpad with dpad_to_buttons reports the d-pad as BTN_TRIGGER_HAPPY1-4: left, right, up, down
    0x2C0: Button.DPAD_LEFT, 0x2C1: Button.DPAD_RIGHT, 0x2C2: Button.DPAD_UP, 0x2C3: Button.DPAD_DOWN,
}
# xpad's numbering: axes LX LY LT RX RY RT hatX hatY; buttons A B X Y LB RB back start guide LS RS, dpad.
XPAD_AXIS_CODES = (0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x10, 0x11)
XPAD_BUTTON_CODES = (0x130, 0x131, 0x133, 0x134, 0x136, 0x137, 0x13A, 0x13B, 0x13C, 0x13D, 0x13E,
                     0x2C0, 0x2C1, 0x2C2, 0x2C3)

_FULL = 32767
_HAT_THRESHOLD = _FULL // 2
_GONE_ERRNOS = {errno.ENODEV, errno.ENXIO, errno.EIO}
_MAX_READS_PER_POLL = 256  # 4096 bytes each: a device that never stops talking cannot hang poll()
_JS_NAME = re.compile(r"js(\d+)")


def find_joysticks(device_dir: str | os.PathLike[str] | None = None) -> list[GamepadInfo]:
    """Every `js<N>` in device_dir (default /dev/input), lowest N first. Opens nothing, so a
    device the user may not read is still listed; opening it explains the permission fix."""
    directory = Path(device_dir) if device_dir is not None else DEFAULT_DEVICE_DIR
    if not directory.is_dir():
        return []
    found: list[GamepadInfo] = []
    for entry in directory.iterdir():
        match = _JS_NAME.fullmatch(entry.name)
        if match and not entry.is_dir():
            found.append(GamepadInfo(path=entry, index=int(match.group(1)), name=_sysfs_name(entry)))
    return sorted(found, key=lambda info: info.index)


def _sysfs_name(path: Path) -> str:
    """The device's name from sysfs, which anyone may read, or "unknown joystick"."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return "unknown joystick"  # unplugged while listing
    if not stat.S_ISCHR(st.st_mode):
        return "unknown joystick"
    name_file = Path(f"/sys/dev/char/{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}/device/name")
    try:
        return name_file.read_text(encoding="utf-8", errors="replace").strip() or "unknown joystick"
    except OSError:
        return "unknown joystick"


def permission_message(path: Path) -> str:
    return (
        f"no permission to read the gamepad {path}. Add yourself to the 'input' group "
        "(sudo usermod -aG input $USER, then log out and back in), or give the logged-in user access "
        "with a udev rule: echo 'KERNEL==\"js[0-9]*\", SUBSYSTEM==\"input\", TAG+=\"uaccess\"' | "
        "sudo tee /etc/udev/rules.d/70-gamepad.rules && sudo udevadm control --reload && sudo udevadm trigger"
    )


class JoystickPad(PhysicalPad):
    """A Linux joystick device, or anything that speaks its event stream (a FIFO in tests)."""

    def __init__(self, info: GamepadInfo, *, dead_zone: float = DEFAULT_DEAD_ZONE) -> None:
        if info.path is None:
            raise GamepadError("a Linux joystick needs a device path such as /dev/input/js0")
        path = Path(info.path)
        try:
            self._fd: int | None = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        except PermissionError as exc:
            raise GamepadError(permission_message(path)) from exc
        except FileNotFoundError as exc:
            raise GamepadGone(f"the gamepad {path} no longer exists; is it still plugged in?") from exc
        except OSError as exc:
            raise GamepadError(f"cannot open the gamepad {path}: {exc.strerror}") from exc
        try:
            name, axis_codes, button_codes = _query_device(self._fd, path)
            super().__init__(info, name, dead_zone)
        except BaseException:
            os.close(self._fd)
            raise
        self.path = path
        self.axis_count, self.button_count = len(axis_codes), len(button_codes)
        roles = dict(_AXIS_ROLES)
        if 0x03 not in axis_codes and 0x04 not in axis_codes:  # no RX/RY: HID-style pads put the
            roles[0x02], roles[0x05] = "rx", "ry"  # right stick on Z/RZ (triggers then on BRAKE/GAS)
        self._axis_roles = [roles.get(code) for code in axis_codes]
        self._button_map = [_BUTTON_CODES.get(code) for code in button_codes]
        # Triggers rest at -32767 (released) until the device's init events say otherwise.
        self._axes = {"lx": 0, "ly": 0, "rx": 0, "ry": 0, "lt": -_FULL, "rt": -_FULL, "hat_x": 0, "hat_y": 0}
        self._held: set[Button] = set()
        self._buffer = bytearray()
        self._gone: str | None = None

    def poll(self) -> PadState:
        if self._gone is not None:
            raise GamepadGone(self._gone)
        if self._fd is None:
            raise GamepadError(f"the gamepad {self.name!r} ({self.path}) is closed")
        ended = self._drain()
        whole = len(self._buffer) - len(self._buffer) % JS_EVENT.size
        for _time, value, kind, number in JS_EVENT.iter_unpack(self._buffer[:whole]):
            self._apply(kind & ~JS_EVENT_INIT, number, value)
        del self._buffer[:whole]  # a partial event waits for the rest of its bytes
        if ended:
            self._vanish("its event stream ended")
        return self._state()

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _drain(self) -> bool:
        """Read everything pending; True when the stream has ended (the writer closed)."""
        assert self._fd is not None
        for _ in range(_MAX_READS_PER_POLL):
            try:
                chunk = os.read(self._fd, 4096)
            except BlockingIOError:
                return False
            except OSError as exc:
                if exc.errno in _GONE_ERRNOS:
                    self._vanish(f"reading it failed: {exc.strerror}", exc)
                raise GamepadError(f"reading the gamepad {self.path} failed: {exc.strerror}") from exc
            if not chunk:
                return True
            self._buffer += chunk
        return False

    def _vanish(self, reason: str, cause: OSError | None = None) -> NoReturn:
        self._gone = (
            f"the gamepad {self.name!r} ({self.path}) disconnected: {reason}. "
            "Plug it back in and open it again"
        )
        self.close()
        raise GamepadGone(self._gone) from cause

    def _apply(self, kind: int, number: int, value: int) -> None:
        if kind == JS_EVENT_AXIS and number < len(self._axis_roles):
            role = self._axis_roles[number]
            if role is not None:
                self._axes[role] = value
        elif kind == JS_EVENT_BUTTON and number < len(self._button_map):
            button = self._button_map[number]
            if button is not None:
                (self._held.add if value else self._held.discard)(button)

    def _state(self) -> PadState:
        a = self._axes
        # The joystick API reports +value = down; PadState wants +y = up.
        lx, ly = apply_dead_zone(_unit(a["lx"]), -_unit(a["ly"]), self.dead_zone)
        rx, ry = apply_dead_zone(_unit(a["rx"]), -_unit(a["ry"]), self.dead_zone)
        buttons = set(self._held)
        for pressed, button in (
            (a["lt"] > 0, Button.ZL), (a["rt"] > 0, Button.ZR),  # past half of -32767..32767
            (a["hat_x"] < -_HAT_THRESHOLD, Button.DPAD_LEFT), (a["hat_x"] > _HAT_THRESHOLD, Button.DPAD_RIGHT),
            (a["hat_y"] < -_HAT_THRESHOLD, Button.DPAD_UP), (a["hat_y"] > _HAT_THRESHOLD, Button.DPAD_DOWN),
        ):
            if pressed:
                buttons.add(button)
        return PadState(left_x=lx, left_y=ly, right_x=rx, right_y=ry, buttons=frozenset(buttons))


def _unit(raw: int) -> float:
    return max(-1.0, min(1.0, raw / _FULL))


def _query_device(fd: int, path: Path) -> tuple[str, list[int], list[int]]:
    """(name, ABS code of each axis, BTN code of each button). Not a character device (a FIFO in
    tests): "unknown joystick" with xpad's layout. A character device that refuses the joystick
    ioctls is not a joystick, and that is an error."""
    if not stat.S_ISCHR(os.fstat(fd).st_mode):
        return "unknown joystick", list(XPAD_AXIS_CODES), list(XPAD_BUTTON_CODES)
    import fcntl  # POSIX only; keeps this module importable everywhere

    try:
        name_buf = bytearray(_NAME_LEN)
        fcntl.ioctl(fd, JSIOCGNAME, name_buf)
        counts = bytearray(1), bytearray(1)
        fcntl.ioctl(fd, JSIOCGAXES, counts[0])
        fcntl.ioctl(fd, JSIOCGBUTTONS, counts[1])
        axmap, btnmap = bytearray(_ABS_CNT), bytearray(_KEYMAP_LEN * 2)
        fcntl.ioctl(fd, JSIOCGAXMAP, axmap)
        fcntl.ioctl(fd, JSIOCGBTNMAP, btnmap)
    except OSError as exc:
        raise GamepadError(f"{path} is not a joystick device ({exc.strerror})") from exc
    name = name_buf.split(b"\0", 1)[0].decode("utf-8", errors="replace").strip() or "unknown joystick"
    buttons = struct.unpack(f"={_KEYMAP_LEN}H", btnmap)
    return name, list(axmap[: counts[0][0]]), list(buttons[: counts[1][0]])
