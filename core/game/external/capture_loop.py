"""The capture thread: grabs the game window at a fixed rate and publishes into a FrameRing.

The ring is the same double-buffered shared-memory ring the built-in world writes (docs/frame-ring.md),
so the runner, the studio and recording read external games exactly as they read the built-in one.
A frame's tick is the capture time in periods of 1/fps since the loop began: real-time games have no
tick of their own that we could see.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np

from core.game.external.capture import CaptureError, WindowCapture
from core.game.frames import FrameRing

STATS_WINDOW = 600  # frames kept for the capture statistics


@dataclass(frozen=True)
class CaptureStats:
    frames: int
    fps: float               # frames published per second, over the recent window
    grab_ms_p95: float       # time to grab one frame from the window
    age_ms_p95: float        # from the start of the grab to the frame being readable in the ring
    method: str


def fit_to(pixels: np.ndarray, width: int, height: int) -> np.ndarray:
    """The window's pixels at the benchmark resolution (INTER_AREA: no aliasing when shrinking)."""
    if pixels.shape[0] != height or pixels.shape[1] != width:
        pixels = cv2.resize(pixels, (width, height), interpolation=cv2.INTER_AREA)
    return pixels


class CaptureLoop:
    def __init__(self, open_capture: Callable[[], WindowCapture], ring: FrameRing, fps: float) -> None:
        self._open_capture = open_capture
        self.ring = ring
        self.fps = fps
        self.t0 = time.monotonic()
        self._stop = threading.Event()
        self._changed = threading.Condition()
        self._published_at: dict[int, float] = {}   # frame_no -> monotonic time its grab started
        self._last_frame_no = 0
        self._last_ok = time.monotonic()
        self._recent: deque[tuple[float, float, float]] = deque(maxlen=STATS_WINDOW)  # (t, grab, age)
        self.method = "?"
        self.error: str | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="pokegym-capture", daemon=True)
        self._thread.start()

    def wait_started(self, timeout: float) -> None:
        """Block until the first frame is published (or the capture failed to open)."""
        if not self._ready.wait(timeout):
            raise CaptureError(f"no frame was captured within {timeout:.0f} s")
        if self.error is not None and self._last_frame_no == 0:
            raise CaptureError(self.error)

    def tick_at(self, moment: float) -> int:
        return int((moment - self.t0) * self.fps)

    def _run(self) -> None:
        try:
            capture = self._open_capture()
        except Exception as exc:  # noqa: BLE001 - reported to the game's caller through `error`
            self.error = f"could not open the window capture: {exc}"
            self._ready.set()
            return
        self.method = capture.method
        period = 1.0 / self.fps
        due = time.monotonic()
        try:
            while not self._stop.is_set():
                started = time.monotonic()
                try:
                    pixels = capture.grab()
                except CaptureError as exc:
                    self.error = str(exc)
                    if self._stop.wait(0.1):
                        break
                    continue
                grabbed = time.monotonic()
                frame_no = self.ring.write(self._fit(pixels), self.tick_at(started))
                published = time.monotonic()
                with self._changed:
                    self._published_at = {frame_no: started}
                    self._last_frame_no = frame_no
                    self._last_ok = published
                    self.error = None
                    self._recent.append((published, grabbed - started, published - started))
                    self._changed.notify_all()
                self._ready.set()
                due += period
                delay = due - time.monotonic()
                if delay < -period:  # fell behind (a slow grab): do not try to catch up with a burst
                    due = time.monotonic()
                elif delay > 0:
                    self._stop.wait(delay)
        finally:
            capture.close()
            self._ready.set()

    def _fit(self, pixels: np.ndarray) -> np.ndarray:
        return fit_to(pixels, self.ring.width, self.ring.height)

    def grab_started(self, frame_no: int) -> float | None:
        """When the grab of `frame_no` began (monotonic), while it is the newest frame published; else None."""
        return self._published_at.get(frame_no)

    def wait_frame_after(self, moment: float, timeout: float) -> int | None:
        """The newest frame once one whose grab started at or after `moment` (monotonic) is out, or None."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                started = self._published_at.get(self._last_frame_no)
                if started is not None and started >= moment:
                    return self._last_frame_no
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._stop.is_set():
                    return None
                self._changed.wait(min(remaining, 0.5))

    def seconds_since_frame(self) -> float:
        return time.monotonic() - self._last_ok

    def stats(self) -> CaptureStats:
        with self._changed:
            recent = list(self._recent)
            frames = self._last_frame_no
        if len(recent) < 2:
            return CaptureStats(frames, 0.0, 0.0, 0.0, self.method)
        span = recent[-1][0] - recent[0][0]
        grabs = sorted(r[1] for r in recent)
        ages = sorted(r[2] for r in recent)
        p95 = int(0.95 * (len(recent) - 1))
        return CaptureStats(frames, (len(recent) - 1) / span if span > 0 else 0.0, grabs[p95] * 1000,
                            ages[p95] * 1000, self.method)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5.0)
