"""Input devices behind one interface, fed from PadState.

* XTestInput: keyboard and mouse through XTEST, mapped by the backend file (CI uses this).
* UinputPad (core/game/external/pads.py): a virtual gamepad through /dev/uinput (python-evdev).
* VgamepadPad (pads.py): ViGEm's virtual X360 pad on Windows, through vgamepad.

Every device tracks what it holds and releases all of it in release_all(); ExternalGame calls that
on stop, on error, on Ctrl+C and at exit, and a guard process does it if we are killed (guard.py).
"""

from __future__ import annotations

import math
import sys
import threading
import time
from typing import Protocol, cast

from core.game.errors import GameStartError
from core.game.external.spec import ExternalSpec, Input, Keyboard, StickKeys
from core.game.external.x11 import XTestDevice
from core.game.pad import PadState

# Pointer motion goes out at most this often. Games that re-centre the pointer every frame (Minetest) lose
# motion that lands between their read and their warp; small pieces at a high rate lost up to 7% of a turn
# (5 px every 8 ms), while pieces 50 ms apart came out exact in every trial.
MOUSE_TICK_S = 0.05
TURN_PIECE_PX = 60  # and never more than this in one piece: a pointer stopped by the screen's edge loses the rest


class InputDevice(Protocol):
    description: str

    def apply(self, pad: PadState) -> None:
        """Hold exactly what `pad` says (buttons, sticks) until the next apply()."""
        ...

    def turn_camera(self, degrees: float) -> bool:
        """Turn the camera by `degrees` (positive: to the right) at once, if the device can do so exactly."""
        ...

    def begin_hold(self) -> object:
        """A token marking the start of a timed hold (see end_hold)."""
        ...

    def end_hold(self, token: object, pad: PadState, seconds: float) -> None:
        """After holding `pad` for `seconds`: stop stick-driven motion, topped up to exactly speed x time."""
        ...

    def release_all(self) -> None: ...

    def held_codes(self) -> tuple[list[int], list[int]]:
        """(keycodes, mouse buttons) this device may hold: what a guard must release if we die."""
        ...

    def close(self) -> None: ...


def _stick_keys(keys: StickKeys, x: float, y: float) -> set[str]:
    held: set[str] = set()
    if y > keys.threshold:
        held.add(keys.up)
    if y < -keys.threshold:
        held.add(keys.down)
    if x < -keys.threshold:
        held.add(keys.left)
    if x > keys.threshold:
        held.add(keys.right)
    return held


class _MouseStick:
    """Moves the pointer at a speed set by the right stick, on its own thread, counting what it moved."""

    def __init__(self, device: XTestDevice, px_per_s: float, invert_y: bool) -> None:
        self._device = device
        self._px_per_s = px_per_s
        self._sign_y = 1 if invert_y else -1  # stick up = pointer up = negative y on screen
        self._lock = threading.Lock()
        self._velocity = (0.0, 0.0)
        self._remainder = [0.0, 0.0]
        self.moved = [0, 0]
        self._wake = threading.Event()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="pokegym-mouse-stick", daemon=True)
        self._thread.start()

    def set(self, x: float, y: float) -> None:
        with self._lock:
            self._velocity = (x * self._px_per_s, self._sign_y * y * self._px_per_s)
            if x == 0 and y == 0:
                self._remainder = [0.0, 0.0]
        self._wake.set()

    def emit(self, dx: int, dy: int) -> None:
        """Move by exactly (dx, dy), in pieces no larger than TURN_PIECE_PX, MOUSE_TICK_S apart."""
        while dx or dy:
            px = max(-TURN_PIECE_PX, min(TURN_PIECE_PX, dx))
            py = max(-TURN_PIECE_PX, min(TURN_PIECE_PX, dy))
            self._emit_piece(px, py)
            dx, dy = dx - px, dy - py
            if dx or dy:
                time.sleep(MOUSE_TICK_S)

    def _emit_piece(self, dx: int, dy: int) -> None:
        with self._lock:
            self._device.move_relative(dx, dy)
            self.moved[0] += dx
            self.moved[1] += dy

    def target(self, x: float, y: float, seconds: float) -> tuple[int, int]:
        return round(x * self._px_per_s * seconds), round(self._sign_y * y * self._px_per_s * seconds)

    def _run(self) -> None:
        last = time.monotonic()
        while not self._closed:
            with self._lock:
                vx, vy = self._velocity
            if vx == 0 and vy == 0:
                self._wake.wait(0.5)
                self._wake.clear()
                last = time.monotonic()
                continue
            time.sleep(MOUSE_TICK_S)
            now = time.monotonic()
            dt, last = now - last, now
            with self._lock:
                vx, vy = self._velocity
                self._remainder[0] += vx * dt
                self._remainder[1] += vy * dt
                dx, dy = int(self._remainder[0]), int(self._remainder[1])
                self._remainder[0] -= dx
                self._remainder[1] -= dy
                if dx or dy:
                    try:
                        self._device.move_relative(dx, dy)
                    except Exception:  # noqa: BLE001 - the X server went away; the game's death is reported elsewhere
                        self._closed = True
                        return
                    self.moved[0] += dx
                    self.moved[1] += dy

    def close(self) -> None:
        self._closed = True
        self._wake.set()
        self._thread.join(timeout=2.0)


class XTestInput:
    """PadState -> keys and mouse, through XTEST, for the window that has input focus."""

    def __init__(self, spec: Input, display_name: str) -> None:
        self.spec = spec
        self.device = XTestDevice(display_name)
        keyboard = spec.keyboard or Keyboard()
        self._keyboard = keyboard
        names = set(keyboard.buttons.values())
        for stick in (keyboard.left_stick, keyboard.right_stick):
            if stick is not None:
                names |= {stick.up, stick.down, stick.left, stick.right}
        if spec.chat_key:
            names |= {spec.chat_key, "Shift_L", "Return"}  # chat macros type with these
        self._codes = {name: self.device.keycode(name) for name in names if not name.startswith("mouse")}
        self._held: set[str] = set()
        self._mouse = (_MouseStick(self.device, spec.mouse.right_stick_px_per_s, spec.mouse.invert_y)
                       if spec.mouse is not None and keyboard.right_stick is None else None)
        self.description = "XTEST keyboard" + (" and mouse" if spec.mouse is not None else "")

    def _wanted(self, pad: PadState) -> set[str]:
        keys = self._keyboard
        wanted = {keys.buttons[b] for b in pad.buttons if b in keys.buttons}
        if keys.left_stick is not None:
            wanted |= _stick_keys(keys.left_stick, pad.left_x, pad.left_y)
        if keys.right_stick is not None:
            wanted |= _stick_keys(keys.right_stick, pad.right_x, pad.right_y)
        return wanted

    def _set(self, name: str, down: bool) -> None:
        if name.startswith("mouse"):
            self.device.button(int(name[5:]), down)
        else:
            self.device.key(self._codes[name], down)

    def apply(self, pad: PadState) -> None:
        wanted = self._wanted(pad)
        for name in sorted(self._held - wanted):
            self._set(name, False)
            self._held.discard(name)
        for name in sorted(wanted - self._held):
            self._held.add(name)  # counted as held before it is sent, so a failure still gets released
            self._set(name, True)
        if self._mouse is not None:
            self._mouse.set(pad.right_x, pad.right_y)

    def begin_hold(self) -> object:
        return (self._mouse.moved[0], self._mouse.moved[1]) if self._mouse is not None else (0, 0)

    def end_hold(self, token: object, pad: PadState, seconds: float) -> None:
        """Top the pointer motion of a hold up (or back) to exactly speed x time, whatever the thread's timing."""
        if self._mouse is None:
            return
        self._mouse.set(0.0, 0.0)
        start_x, start_y = cast("tuple[int, int]", token)  # begin_hold's (moved x, moved y)
        want_x, want_y = self._mouse.target(pad.right_x, pad.right_y, seconds)
        self._mouse.emit(want_x - (self._mouse.moved[0] - start_x), want_y - (self._mouse.moved[1] - start_y))

    def turn_camera(self, degrees: float) -> bool:
        if self.spec.mouse is None:
            return False
        remaining = round(degrees / self.spec.mouse.degrees_per_px)
        while remaining:
            piece = max(-TURN_PIECE_PX, min(TURN_PIECE_PX, remaining))
            if self._mouse is not None:
                self._mouse.emit(piece, 0)
            else:
                self.device.move_relative(piece, 0)
            remaining -= piece
            if remaining:
                time.sleep(MOUSE_TICK_S)
        return True

    def type_text(self, text: str) -> None:
        """Type printable ASCII through XTEST (for chat macros)."""
        for char in text:
            name = {" ": "space", "/": "slash", ",": "comma", ".": "period", "-": "minus", "_": "underscore",
                    ":": "colon"}.get(char, char)
            shift = char.isupper() or char in "_:"
            code = self.device.keycode(name)
            shift_code = self.device.keycode("Shift_L") if shift else None
            if shift_code:
                self.device.key(shift_code, True)
            self.device.key(code, True)
            self.device.key(code, False)
            if shift_code:
                self.device.key(shift_code, False)

    def press_key(self, name: str) -> None:
        code = self._codes.get(name) or self.device.keycode(name)
        self.device.key(code, True)
        self.device.key(code, False)

    def release_all(self) -> None:
        if self._mouse is not None:
            self._mouse.set(0.0, 0.0)
        for name in sorted(self._held):
            try:
                self._set(name, False)
            finally:
                self._held.discard(name)

    def held_codes(self) -> tuple[list[int], list[int]]:
        names = set(self._keyboard.buttons.values())
        buttons = sorted(int(n[5:]) for n in names if n.startswith("mouse"))
        return sorted(set(self._codes.values())), buttons

    def close(self) -> None:
        try:
            self.release_all()
        finally:
            if self._mouse is not None:
                self._mouse.close()
            self.device.close()


def seconds_for_turn(degrees: float, degrees_per_s: float) -> float:
    return abs(degrees) / degrees_per_s if degrees_per_s > 0 else math.inf


def make_input(spec: ExternalSpec, display: str | None) -> InputDevice:
    device = spec.input.device
    if device == "xtest":
        if display is None:
            raise GameStartError("the xtest input device needs an X display (Linux/X11)")
        return XTestInput(spec.input, display)
    from core.game.external import pads

    if device == "pad":
        device = "vgamepad" if sys.platform == "win32" else "uinput"
    return pads.UinputPad(spec.input) if device == "uinput" else pads.VgamepadPad(spec.input)
