"""Physical gamepads: real js_event bytes through a real FIFO, and XInput structs built here."""

from __future__ import annotations

import ctypes
import errno
import os
import struct
from pathlib import Path

import pytest

from core.game import physical_pad_linux as linux
from core.game.gamepad_devices import find_gamepads, open_gamepad
from core.game.pad import Button, PadState
from core.game.physical_pad import GamepadError, GamepadGone, GamepadInfo
from core.game.physical_pad_windows import (
    ERROR_DEVICE_NOT_CONNECTED,
    XINPUT_GAMEPAD,
    XINPUT_STATE,
    XInputPad,
    find_xinput_pads,
    pad_state_from_xinput,
)

posix_only = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="the Linux joystick tests need POSIX FIFOs")

BUTTON, AXIS, INIT = 0x01, 0x02, 0x80
# xpad numbering
LX, LY, LT, RX, RY, RT, HAT_X, HAT_Y = range(8)
A, B, X, Y, LB, RB, BACK, START, GUIDE = range(9)
FULL = 32767


def event(kind: int, number: int, value: int, time_ms: int = 0) -> bytes:
    return struct.pack("=IhBB", time_ms, value, kind, number)  # struct js_event, native order


class FakeJoystick:
    """A FIFO standing in for /dev/input/js0: the pad reads one end, the test writes the other."""

    def __init__(self, path: Path) -> None:
        if not hasattr(os, "mkfifo"):
            pytest.skip("the Linux joystick tests need POSIX FIFOs")
        os.mkfifo(path)
        self.pad = open_gamepad(GamepadInfo(path=path, index=0))  # the reader opens first, non-blocking
        self.writer: int | None = os.open(path, os.O_WRONLY)  # a reader exists, so this does not block

    def send(self, *events: bytes) -> None:
        os.write(self.writer, b"".join(events))

    def unplug(self) -> None:
        os.close(self.writer)
        self.writer = None


@pytest.fixture
def js(tmp_path):
    joystick = FakeJoystick(tmp_path / "js0")
    yield joystick
    joystick.pad.close()
    if joystick.writer is not None:
        os.close(joystick.writer)


def test_init_events_give_the_state_the_controller_is_already_in(js):
    assert js.pad.poll() == PadState()  # nothing sent yet: neutral, and poll did not block
    js.send(
        *(event(AXIS | INIT, n, 0) for n in (LX, RX, RY, HAT_X, HAT_Y)),
        event(AXIS | INIT, LY, -FULL),  # left stick already pushed forward
        event(AXIS | INIT, LT, -FULL),  # left trigger released
        event(AXIS | INIT, RT, FULL),  # right trigger held
        event(BUTTON | INIT, A, 1),
        event(BUTTON | INIT, B, 0),
    )
    state = js.pad.poll()
    assert state.left_y == 1.0
    assert state.buttons == {Button.A, Button.ZR}
    assert js.pad.name == "unknown joystick"  # a FIFO answers no joystick ioctls


def test_sticks_are_scaled_with_y_inverted_to_up(js):
    js.send(event(AXIS, LX, FULL), event(AXIS, RY, -FULL))
    state = js.pad.poll()
    assert (state.left_x, state.left_y, state.right_x, state.right_y) == (1.0, 0.0, 0.0, 1.0)
    js.send(event(AXIS, LX, 0), event(AXIS, LY, FULL), event(AXIS, RY, 0))  # left stick pulled back
    state = js.pad.poll()
    assert (state.left_x, state.left_y, state.right_y) == (0.0, -1.0, 0.0)
    js.send(event(AXIS, LY, FULL // 2))  # half way: rescaled past the dead zone, still down
    assert -0.5 < js.pad.poll().left_y < -0.35


def test_a_resting_stick_reads_exactly_zero_and_diagonals_stay_within_range(js):
    js.send(event(AXIS, LX, 3000), event(AXIS, LY, -3000), event(AXIS, RX, -4000))  # drift of a worn stick
    state = js.pad.poll()
    assert (state.left_x, state.left_y, state.right_x, state.right_y) == (0.0, 0.0, 0.0, 0.0)
    js.send(event(AXIS, LX, FULL), event(AXIS, LY, -FULL))  # full up-right corner of a square gate
    state = js.pad.poll()
    assert state.left_x == pytest.approx(2**-0.5) and state.left_y == pytest.approx(2**-0.5)


def test_buttons_press_and_release_and_the_dpad_hat_and_triggers_are_buttons(js):
    js.send(event(BUTTON, A, 1), event(BUTTON, LB, 1), event(BUTTON, START, 1), event(BUTTON, GUIDE, 1))
    assert js.pad.poll().buttons == {Button.A, Button.L, Button.PLUS}  # guide has no Button
    js.send(event(BUTTON, A, 0), event(BUTTON, BACK, 1), event(AXIS, HAT_Y, -FULL), event(AXIS, HAT_X, FULL))
    assert js.pad.poll().buttons == {Button.L, Button.PLUS, Button.MINUS, Button.DPAD_UP, Button.DPAD_RIGHT}
    js.send(event(AXIS, LT, 1000), event(AXIS, RT, -1000))  # left just past half, right just short of it
    assert Button.ZL in js.pad.poll().buttons and Button.ZR not in js.pad.poll().buttons
    js.send(event(BUTTON, LB, 0), event(BUTTON, START, 0), event(BUTTON, BACK, 0), event(AXIS, HAT_Y, 0),
            event(AXIS, HAT_X, 0), event(AXIS, LT, -FULL))
    assert js.pad.poll().buttons == frozenset()


def test_one_poll_drains_everything_and_reports_the_latest_state(js):
    ramp = [event(AXIS, LX, v, time_ms=i) for i, v in enumerate(range(-FULL, FULL + 1, 64))]
    taps = [event(BUTTON, A, i % 2) for i in range(1000)]  # ends pressed
    js.send(*ramp, *taps, event(AXIS, LX, FULL))
    state = js.pad.poll()
    assert state.left_x == 1.0 and state.buttons == {Button.A}
    assert js.pad.poll() == state  # nothing new: same state, no blocking


def test_a_partial_event_is_kept_and_completed_by_the_next_poll(js):
    press = event(BUTTON, X, 1)
    js.send(event(BUTTON, Y, 1), press[:5])
    assert js.pad.poll().buttons == {Button.Y}
    js.send(press[5:])
    assert js.pad.poll().buttons == {Button.Y, Button.X}


def test_a_stream_that_ends_means_the_gamepad_is_gone_and_stays_gone(js):
    js.send(event(BUTTON, A, 1))
    assert js.pad.poll().buttons == {Button.A}
    js.unplug()
    with pytest.raises(GamepadGone, match="disconnected.*Plug it back in"):
        js.pad.poll()
    with pytest.raises(GamepadGone):
        js.pad.poll()


def test_an_unplugged_device_that_fails_reads_with_enodev_is_gone(js, monkeypatch):
    # joydev answers read() with ENODEV once the controller is unplugged; a FIFO cannot do that.
    def unplugged(fd, n):
        raise OSError(errno.ENODEV, os.strerror(errno.ENODEV))

    monkeypatch.setattr(os, "read", unplugged)
    with pytest.raises(GamepadGone, match="No such device") as caught:
        js.pad.poll()
    monkeypatch.undo()
    assert isinstance(caught.value.__cause__, OSError)


def test_closing_releases_the_device_and_polling_after_close_is_an_error(tmp_path):
    with FakeJoystick(tmp_path / "js0").pad as pad:
        assert pad.poll() == PadState()
    with pytest.raises(GamepadError, match="closed"):
        pad.poll()


@posix_only
@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root ignores file permissions")
def test_permission_denied_explains_how_to_get_access(tmp_path):
    device = tmp_path / "js0"
    device.touch()
    device.chmod(0)
    with pytest.raises(GamepadError, match="no permission to read the gamepad") as caught:
        open_gamepad(GamepadInfo(path=device))
    assert "'input' group" in str(caught.value) and "udev rule" in str(caught.value)


def test_find_on_a_directory_without_joysticks_finds_nothing(tmp_path):
    for name in ("event0", "mouse0", "mice", "js"):
        (tmp_path / name).touch()
    (tmp_path / "by-id").mkdir()
    assert find_gamepads(tmp_path) == []
    assert open_gamepad(device_dir=tmp_path) is None
    assert find_gamepads(tmp_path / "missing") == []


@posix_only
def test_find_lists_joysticks_in_number_order_and_open_takes_the_first(tmp_path):
    for name in ("js10", "js2", "event3"):
        os.mkfifo(tmp_path / name)
    found = find_gamepads(tmp_path)
    assert [(info.path, info.index, info.name) for info in found] == [
        (tmp_path / "js2", 2, "unknown joystick"), (tmp_path / "js10", 10, "unknown joystick"),
    ]
    with open_gamepad(device_dir=tmp_path) as pad:
        assert pad.info.path == tmp_path / "js2"


@posix_only
def test_a_device_that_is_not_a_joystick_is_refused_by_name():
    if not Path("/dev/null").is_char_device():
        pytest.skip("no /dev/null character device")
    with pytest.raises(GamepadError, match="/dev/null is not a joystick device"):
        open_gamepad(GamepadInfo(path=Path("/dev/null")))


def test_a_missing_device_is_reported_as_gone(tmp_path):
    with pytest.raises(GamepadGone, match="no longer exists"):
        open_gamepad(GamepadInfo(path=tmp_path / "js0"))


def test_ioctl_requests_match_linux_joystick_h():
    # Values printed by a C program including <linux/joystick.h>; a wrong one and a real pad will not open.
    assert (linux.JSIOCGAXES, linux.JSIOCGBUTTONS, linux.JSIOCGNAME) == (0x80016A11, 0x80016A12, 0x80806A13)
    assert (linux.JSIOCGAXMAP, linux.JSIOCGBTNMAP, linux.JS_EVENT.size) == (0x80406A32, 0x84006A34, 8)


# --- Windows XInput: everything up to the DLL call ---------------------------------------------


def xinput(buttons=0, lt=0, rt=0, lx=0, ly=0, rx=0, ry=0) -> XINPUT_GAMEPAD:
    # Built from the bytes Windows writes, so the struct layout is checked too.
    return XINPUT_GAMEPAD.from_buffer_copy(struct.pack("<HBBhhhh", buttons, lt, rt, lx, ly, rx, ry))


def test_xinput_struct_layout_matches_windows():
    assert (ctypes.sizeof(XINPUT_GAMEPAD), ctypes.sizeof(XINPUT_STATE)) == (12, 16)


def test_xinput_state_converts_to_pad_state():
    state = pad_state_from_xinput(
        xinput(buttons=0x1000 | 0x0010 | 0x0001 | 0x0100 | 0x0400, lt=200, rt=100, ly=FULL, rx=1500, ry=-1500)
    )
    assert state.left_y == 1.0  # XInput +y is already up: not inverted
    assert (state.left_x, state.right_x, state.right_y) == (0.0, 0.0, 0.0)  # inside the dead zone
    assert state.buttons == {Button.A, Button.PLUS, Button.DPAD_UP, Button.L, Button.ZL}  # 0x0400 = guide
    assert pad_state_from_xinput(xinput(buttons=0x2000 | 0x4000 | 0x8000 | 0x0020, ry=-32768)) == PadState(
        right_y=-1.0, buttons={Button.B, Button.X, Button.Y, Button.MINUS})


class FakeXInput:
    """Stands in for XInputGetState: slot -> list of pads still to report, then not connected."""

    def __init__(self, slots: dict[int, list[XINPUT_GAMEPAD]]) -> None:
        self.slots = slots
        self.packet = 0

    def __call__(self, index: int, state: XINPUT_STATE) -> int:
        queue = self.slots.get(index, [])
        if not queue:
            return ERROR_DEVICE_NOT_CONNECTED
        self.packet += 1
        state.dwPacketNumber = self.packet
        state.Gamepad = queue.pop(0) if len(queue) > 1 else queue[0]
        return 0


def test_xinput_pad_polls_and_reports_a_disconnect_as_gone():
    fake = FakeXInput({1: [xinput(), xinput(buttons=0x1000, lx=-FULL)]})
    assert [info.index for info in find_xinput_pads(fake)] == [1]
    pad = XInputPad(GamepadInfo(index=1), get_state=fake)
    assert pad.poll() == PadState(left_x=-1.0, buttons={Button.A})
    fake.slots[1].clear()  # unplugged
    with pytest.raises(GamepadGone, match="XInput controller 2.*not connected"):
        pad.poll()
    with pytest.raises(GamepadGone):
        XInputPad(GamepadInfo(index=0), get_state=fake)  # nothing in slot 0
