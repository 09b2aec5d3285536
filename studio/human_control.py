"""Human control of the character: keyboard keys and a physical gamepad become pad input steps.

The keyboard sends one HUMAN_STEP_S step per key press. A gamepad is polled at display rate and
sends the next step only when the previous one has started, so holding a stick walks steadily
instead of queueing a backlog.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Qt, QTimer, Signal, Slot

from core.game.pad import Button, PadState

HUMAN_STEP_S = 0.25
GAMEPAD_POLL_MS = 16
KEY_PADS = {
    Qt.Key.Key_W: PadState(left_y=1.0), Qt.Key.Key_S: PadState(left_y=-1.0),
    Qt.Key.Key_A: PadState(left_x=-1.0), Qt.Key.Key_D: PadState(left_x=1.0),
    Qt.Key.Key_Left: PadState(right_x=-1.0), Qt.Key.Key_Right: PadState(right_x=1.0),
    Qt.Key.Key_Up: PadState(right_y=1.0), Qt.Key.Key_Down: PadState(right_y=-1.0),
    Qt.Key.Key_Space: PadState(buttons=frozenset({Button.A})), Qt.Key.Key_E: PadState(buttons=frozenset({Button.A})),
    Qt.Key.Key_Q: PadState(buttons=frozenset({Button.B})),
}
KEY_HELP = [("W A S D", "move"), ("Arrow keys", "turn and tilt the camera"), ("Space or E", "A (interact)"),
            ("Q", "B (cancel)"), ("Gamepad", "left stick moves, right stick turns, buttons as on a Switch pad")]

SendInput = Callable[[PadState, float], None]
WaitingInputs = Callable[[], int]


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


class GamepadPoller(QObject):
    """Polls a physical gamepad (if one is connected) and turns deflections into human steps."""

    sig_status = Signal(str)  # what the user should know: found, gone, permission problem

    def __init__(self, send: SendInput, waiting: WaitingInputs) -> None:
        super().__init__()
        self._send, self._waiting = send, waiting
        self._pad = None
        self.device_dir: Path | None = None  # where to look for /dev/input/js* devices (None: the system's)
        self._timer = QTimer(self)
        self._timer.timeout.connect(self._poll)

    def start(self) -> None:
        from core.game.physical_pad import GamepadError, open_gamepad

        try:
            self._pad = open_gamepad(device_dir=self.device_dir)
        except GamepadError as exc:
            self.sig_status.emit(f"Gamepad: {exc}")
            return
        if self._pad is None:
            self.sig_status.emit("No gamepad found; use the keyboard.")
            return
        self.sig_status.emit(f"Gamepad: {self._pad.name}")
        self._timer.start(GAMEPAD_POLL_MS)

    def stop(self) -> None:
        self._timer.stop()
        if self._pad is not None:
            self._pad.close()
            self._pad = None

    @property
    def active(self) -> bool:
        return self._pad is not None

    @Slot()
    def _poll(self) -> None:
        from core.game.physical_pad import GamepadError

        assert self._pad is not None
        try:
            pad = self._pad.poll()
        except GamepadError as exc:
            self.stop()
            self.sig_status.emit(f"Gamepad: {exc}")
            return
        if pad != PadState.neutral() and self._waiting() == 0:
            self._send(pad, HUMAN_STEP_S)
