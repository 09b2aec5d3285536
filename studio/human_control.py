"""Human control of the character: keys held down and a physical gamepad become pad input steps.

A key drives the character for as long as it is held, and no longer, on every game, also one whose step
takes longer than its HUMAN_STEP_S of hold (a real-time game holds, settles and captures). Each press is
a step, sent at once (so a tap is a step, in the order pressed); while a key stays held, the next step is
sent every HUMAN_STEP_S of wall-clock time, but only when none is waiting. So a held key keeps at most one
step waiting behind the one in progress, and letting go of a key that carried more than one step cancels
the waiting one: after release, at most the step in progress plays out.

Auto-repeat is ignored, whether or not Qt recognises it. X sends a held key's auto-repeat as a release and
a press with the same server timestamp; Qt flags the pair only when both arrive in one read, which a busy
event loop or a remote X server breaks. So a release that carries a timestamp is final only after
RELEASE_GRACE_MS without a press of the same key and time; such a press continues the hold. The step
waiting behind the one in progress is withdrawn at once, though, and sent again if the press comes: had
it waited out the grace, the step in progress could end meanwhile, and the waiting one would start and
walk on after the key was up. (Events without a timestamp, sent by tests or other programs, are taken as
they come.) The gamepad is polled at display rate the same way.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer, Signal, Slot

from core.game.pad import Button, PadState

log = logging.getLogger(__name__)

HUMAN_STEP_S = 0.25
POLL_MS = 16
RELEASE_GRACE_MS = 60  # how long the press of an auto-repeat pair may trail its release
KEY_PADS: dict[int, PadState] = {  # by key code (event.key(); Qt.Key is an IntEnum)
    Qt.Key.Key_W: PadState(left_y=1.0), Qt.Key.Key_S: PadState(left_y=-1.0),
    Qt.Key.Key_A: PadState(left_x=-1.0), Qt.Key.Key_D: PadState(left_x=1.0),
    Qt.Key.Key_Left: PadState(right_x=-1.0), Qt.Key.Key_Right: PadState(right_x=1.0),
    Qt.Key.Key_Up: PadState(right_y=1.0), Qt.Key.Key_Down: PadState(right_y=-1.0),
    Qt.Key.Key_Space: PadState(buttons=frozenset({Button.A})), Qt.Key.Key_E: PadState(buttons=frozenset({Button.A})),
    Qt.Key.Key_Q: PadState(buttons=frozenset({Button.B})),
}
KEY_HELP = [("W A S D", "move (for as long as the key is held)"), ("Arrow keys", "turn and tilt the camera"),
            ("Space or E", "A (interact)"), ("Q", "B (cancel)"),
            ("Gamepad", "left stick moves, right stick turns, buttons as on a Switch pad")]

SHORTCUT_MODIFIERS = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier | \
    Qt.KeyboardModifier.MetaModifier
SendInput = Callable[[PadState, float], None]
WaitingInputs = Callable[[], int]
Cancel = Callable[[], None]


def describe_pad(pad: PadState | None) -> str:
    """A short readout for the frame overlay, e.g. "L ↑1.00  R ←0.50  A"."""
    if pad is None:
        return "pad: idle"
    parts = []
    for name, x, y in (("L", pad.left_x, pad.left_y), ("R", pad.right_x, pad.right_y)):
        if x or y:
            parts.append(f"{name} ({x:+.2f}, {y:+.2f})")
    parts += sorted(b.name for b in pad.buttons)
    return "pad: " + ("  ".join(parts) if parts else "neutral")


def is_driving_key(event: Any) -> bool:
    """A first press of a key that drives (for saying why it did not, during an agent's episode)."""
    return (event.key() in KEY_PADS and not event.isAutoRepeat()
            and not event.modifiers() & SHORTCUT_MODIFIERS)


def combine(pads: list[PadState]) -> PadState:
    """Several keys at once: W and D walk diagonally, W and ← walk while turning."""
    def axis(name: str) -> float:
        return max(-1.0, min(1.0, sum(getattr(pad, name) for pad in pads)))

    return PadState(left_x=axis("left_x"), left_y=axis("left_y"), right_x=axis("right_x"), right_y=axis("right_y"),
                    buttons=frozenset(b for pad in pads for b in pad.buttons))


class HumanDriver(QObject):
    """Keys and a physical gamepad, turned into human steps (see the module docstring)."""

    sig_status = Signal(str)  # what the user should know: gamepad found, gone, permission problem

    def __init__(self, send: SendInput, waiting: WaitingInputs, cancel: Cancel) -> None:
        super().__init__()
        self._send, self._waiting, self._cancel = send, waiting, cancel
        self._held: list[int] = []       # keys down, in the order pressed
        self._carried: dict[int, int] = {}  # key held -> how many steps have carried it so far
        # key -> (when its release came, its timestamp): final after RELEASE_GRACE_MS
        self._releasing: dict[int, tuple[float, int]] = {}
        self._withdrawn: set[int] = set()  # keys whose release withdrew the waiting step: sent again if they go on
        self._pad = None                 # the physical gamepad, while one is open
        self._stick = PadState()         # its last reading
        self.device_dir: Path | None = None  # where to look for /dev/input/js* devices (None: the system's)
        self.steps_sent = 0
        self._next_send = 0.0  # monotonic time from which the next step may be sent
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.timeout.connect(self._tick)

    # -- keys ---------------------------------------------------------------------------------
    def key_down(self, key: int, auto_repeat: bool, modifiers: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier,
                 timestamp: int = 0) -> bool:
        """A key went down (at the window system's `timestamp`, 0 if none); returns whether it is a driving key
        (auto-repeats of one are swallowed). With Ctrl, Alt or Meta it is a shortcut, not driving."""
        if key not in KEY_PADS or modifiers & SHORTCUT_MODIFIERS:
            return False
        releasing = self._releasing.pop(key, None)
        if releasing is not None:
            if timestamp and releasing[1] == timestamp:  # X's auto-repeat pair: the hold goes on
                if key in self._withdrawn:
                    self._withdrawn.discard(key)
                    self._send_again()
                return True
            self._release(key)  # a real release, then a new press
        if not auto_repeat and key not in self._held:
            self._held.append(key)
            self._send_held(time.monotonic())  # at once, whatever is queued: a tap is a step, in the order pressed
            self._timer.start(POLL_MS)
        return True

    def key_up(self, key: int, auto_repeat: bool, timestamp: int = 0) -> bool:
        if key not in KEY_PADS:
            return False
        if auto_repeat or key not in self._held or key in self._releasing:
            return True
        if not timestamp:
            self._release(key)
            return True
        self._releasing[key] = (time.monotonic(), timestamp)  # final unless a press with this timestamp follows
        if self._carried.get(key, 0) > 1 and self._waiting() > 0:
            self._cancel()  # now, not after the grace: the step in progress may end before it
            self._withdrawn.add(key)
        self._timer.start(POLL_MS)
        return True

    def _release(self, key: int) -> None:
        self._withdrawn.discard(key)
        self._held.remove(key)
        # In the log with its time, for whoever checks what a human step did after it (the desktop tests).
        log.info("key up: %s (after %d step(s))", Qt.Key(key).name, self._carried.get(key, 0))
        # A step queued behind the one in progress would walk on after the key is up: cancel it. A key
        # carried by one step only was a tap, and that step (started or not) is what the tap asked for.
        if self._carried.pop(key, 0) > 1:
            self._cancel()

    def release_all(self) -> None:
        """Focus went elsewhere: key-up events will not come, so stop driving now."""
        self._releasing.clear()
        self._withdrawn.clear()
        if self._held:
            self._held, self._carried = [], {}
            self._cancel()

    @property
    def held(self) -> PadState | None:
        pads = [KEY_PADS[key] for key in self._held]
        if self._stick != PadState():
            pads.append(self._stick)
        return combine(pads) if pads else None

    # -- the gamepad ---------------------------------------------------------------------------
    def open_gamepad(self) -> None:
        from core.game.gamepad_devices import open_gamepad
        from core.game.physical_pad import GamepadError

        try:
            self._pad = open_gamepad(device_dir=self.device_dir)
        except GamepadError as exc:
            self.sig_status.emit(f"Gamepad: {exc}")
            return
        if self._pad is None:
            self.sig_status.emit("No gamepad found; use the keyboard.")
            return
        self.sig_status.emit(f"Gamepad: {self._pad.name}")
        self._timer.start(POLL_MS)

    def close_gamepad(self) -> None:
        if self._pad is not None:
            self._pad.close()
            self._pad = None
        self._stick = PadState()

    @property
    def gamepad_active(self) -> bool:
        return self._pad is not None

    def _read_gamepad(self) -> None:
        from core.game.physical_pad import GamepadError

        assert self._pad is not None
        try:
            stick = self._pad.poll()
        except GamepadError as exc:
            self.close_gamepad()
            self.sig_status.emit(f"Gamepad: {exc}")
            return
        if stick == PadState() and self._stick != PadState():
            self._cancel()  # the stick is back in the centre: stop now
        self._stick = stick

    # -- sending ---------------------------------------------------------------------------------
    @Slot()
    def _tick(self) -> None:
        now = time.monotonic()
        for key, (released, _stamp) in list(self._releasing.items()):
            if (now - released) * 1000.0 >= RELEASE_GRACE_MS:
                del self._releasing[key]
                self._release(key)
        if self._pad is not None:
            self._read_gamepad()
        # A release in its grace is most likely final: a step sent now would only be cancelled, or, had the
        # step in progress ended meanwhile, walk on after the key is up.
        if self.held is not None and not self._releasing and self._waiting() == 0 and now >= self._next_send:
            self._send_held(now)  # none waits: the previous step has started, and this one is due
        if self.held is None and not self._releasing and self._pad is None:
            self._timer.stop()  # nothing held and no gamepad: nothing to poll

    def _send_again(self) -> None:
        """The step a release withdrew, now that the release proved an auto-repeat: at once, off the cadence (it
        was due when it was first sent)."""
        pad = self.held
        if pad is None or self._waiting() > 0:
            return
        self.steps_sent += 1
        self._send(pad, HUMAN_STEP_S)

    def _send_held(self, now: float) -> None:
        pad = self.held
        if pad is None:
            return
        # Keep the cadence while held (a late tick does not shift the next), restart it after a pause.
        self._next_send = self._next_send + HUMAN_STEP_S if 0 <= now - self._next_send < HUMAN_STEP_S \
            else now + HUMAN_STEP_S
        for key in self._held:
            self._carried[key] = self._carried.get(key, 0) + 1
        self.steps_sent += 1
        self._send(pad, HUMAN_STEP_S)

    def stop(self) -> None:
        self._timer.stop()
        self.release_all()
        self.close_gamepad()
