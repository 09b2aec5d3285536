"""Pressing keys and moving the mouse in the game's window through XTEST (the path the backends use), and the
frames seen before, during and after.

Every wait here is a poll of the game's frames (is the picture still yet?), never a fixed sleep, except the pause
after focusing: games swallow input for a moment after they get focus (FACTS: the focus trap).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from core.game.external.capture import WindowCapture, open_capture
from core.game.external.inputs import MOUSE_TICK_S, TURN_PIECE_PX
from core.game.external.spec import Crop
from core.game.external.x11 import WindowInfo, XTestDevice
from core.scaffold.motion import changed, grey

FOCUS_SETTLE_S = 0.6   # input in the first ~0.5 s after focusing is swallowed (Minetest)
STILL_FOR_S = 0.3      # a picture that has not changed for this long is at rest
POLL_S = 1 / 30        # frames are looked at this often: a busy grab loop would take the CPU the game needs
SETTLE_LIMIT_S = 5.0   # longer than this without a still picture after an input: the game never rests
STILL_LEVEL = 0.002    # ... where "not changed" is under this share of pixels (raised to the game's rest noise)
REST_MARGIN = 1.5      # ... by this much over the most a picture that moves by itself changed at rest


@dataclass(frozen=True)
class Seen:
    """A frame (grey, analysed size) and when it was grabbed, relative to the start of the probe."""

    at_s: float
    picture: np.ndarray


@dataclass(frozen=True)
class Probe:
    """What one input did: the picture at rest before, frames while it lasted, the picture at rest after."""

    what: str
    before: np.ndarray
    during: list[Seen]
    after: np.ndarray
    settle_s: float | None   # from the end of the input until the picture was still again; None: never still


class Prober:
    """The game's window, its frames and XTEST input to it."""

    def __init__(self, display: str, window: WindowInfo) -> None:
        self.window = window
        self.device = XTestDevice(display)
        self.capture: WindowCapture = open_capture("auto", display, window.window_id, window.title, Crop())
        self.still_level = STILL_LEVEL
        self._held: set[int] = set()
        self._next_grab = 0.0

    def focus(self) -> None:
        """Input focus to the game's window, and the pointer over its centre (games read mouse look there)."""
        window = self.window
        self.device.move_to(window.x + window.width // 2, window.y + window.height // 2)
        self.device.focus(window.window_id)
        time.sleep(FOCUS_SETTLE_S)

    def grab(self) -> np.ndarray:
        """The next frame (grey), at most one per POLL_S."""
        wait = self._next_grab - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        self._next_grab = time.monotonic() + POLL_S
        return grey(self.capture.grab())

    def frame_size(self) -> tuple[int, int]:
        """(width, height) of the window's picture, in the window's own pixels."""
        picture = self.capture.grab()
        return int(picture.shape[1]), int(picture.shape[0])

    def rest_noise(self, seconds: float) -> float:
        """The most the picture changed between two frames over `seconds` with no input (0: a still picture)."""
        last, most = self.grab(), 0.0
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            current = self.grab()
            most = max(most, changed(last, current))
            last = current
        return most

    def allow_rest_noise(self, seconds: float) -> float:
        """Measure the picture's change at rest over `seconds`, and from now on judge it still up to REST_MARGIN
        times that (never below the level already in use): a picture that moves by itself (an idle weapon,
        flickering lights) would otherwise never read as still. Returns the change measured."""
        noise = self.rest_noise(seconds)
        self.still_level = max(self.still_level, noise * REST_MARGIN)
        return noise

    def wait_still(self, limit_s: float, still_for_s: float = STILL_FOR_S) -> tuple[np.ndarray, float | None]:
        """(the picture, seconds until it became still and stayed so for `still_for_s`), or None as the time if it
        never did within `limit_s`."""
        began = time.monotonic()
        last = self.grab()
        still_since = time.monotonic()
        while time.monotonic() - began < limit_s:
            current = self.grab()
            now = time.monotonic()
            if changed(last, current) > self.still_level:
                still_since = now
            elif now - still_since >= still_for_s:
                return current, still_since - began
            last = current
        return last, None

    def press(self, key: str, hold_s: float, settle_limit_s: float) -> Probe:
        """Hold `key` for `hold_s`, recording frames, then release it and wait for the picture to rest."""
        code = self.device.keycode(key)
        before, _ = self.wait_still(settle_limit_s)
        began = time.monotonic()
        during: list[Seen] = []
        self._held.add(code)
        self.device.key(code, True)
        try:
            while time.monotonic() - began < hold_s:
                during.append(Seen(time.monotonic() - began, self.grab()))
        finally:
            self.device.key(code, False)
            self._held.discard(code)
        during.append(Seen(time.monotonic() - began, self.grab()))
        after, settle = self.wait_still(settle_limit_s)
        return Probe(key, before, during, after, settle)

    def move_mouse(self, dx: int, dy: int, settle_limit_s: float) -> Probe:
        """Move the pointer by (dx, dy) in pieces the way the backends do, then wait for the picture to rest."""
        what = f"mouse {dx:+d},{dy:+d} px"
        before, _ = self.wait_still(settle_limit_s)
        began = time.monotonic()
        during: list[Seen] = []
        while dx or dy:
            px = max(-TURN_PIECE_PX, min(TURN_PIECE_PX, dx))
            py = max(-TURN_PIECE_PX, min(TURN_PIECE_PX, dy))
            self.device.move_relative(px, py)
            dx, dy = dx - px, dy - py
            piece_end = time.monotonic() + MOUSE_TICK_S
            while time.monotonic() < piece_end:
                during.append(Seen(time.monotonic() - began, self.grab()))
        after, settle = self.wait_still(settle_limit_s)
        return Probe(what, before, during, after, settle)

    def close(self) -> None:
        try:
            for code in sorted(self._held):
                self.device.key(code, False)
        finally:
            try:
                self.capture.close()
            finally:
                self.device.close()
