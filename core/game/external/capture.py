"""Window capture behind one interface: grab() gives the window's client area as RGB.

Linux/X11: mss (XShmGetImage, falling back to XGetImage inside mss), or python-xlib's XGetImage on
the window itself. Windows: the `windows-capture` package (Graphics Capture API), imported only there.
A Wayland session without X11 is refused with a message saying what to do (x11.check_session).
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from typing import Any, Protocol

import cv2
import numpy as np

from core.game.errors import GameError, GameStartError
from core.game.external import x11
from core.game.external.spec import Crop

GEOMETRY_REFRESH_S = 0.5  # windows move; their rectangle is looked up again this often


class CaptureError(GameError):
    """A frame could not be grabbed (the window vanished, the X server went away)."""


class WindowCapture(Protocol):
    method: str

    def grab(self) -> np.ndarray:
        """The window's client area, cropped, as (H, W, 3) RGB uint8 at the window's own size."""
        ...

    def close(self) -> None: ...


def _bgra_to_rgb(raw: Any, width: int, height: int, crop: Crop) -> np.ndarray:
    pixels = np.frombuffer(raw, dtype=np.uint8).reshape(height, width, 4)
    pixels = pixels[crop.top:height - crop.bottom, crop.left:width - crop.right]
    # OpenCV converts in one pass (and releases the GIL): a numpy channel flip copied 10x slower at 1280x720.
    return cv2.cvtColor(pixels, cv2.COLOR_BGRA2RGB)


class _Geometry:
    """The window's absolute rectangle, refreshed from its own X connection now and then."""

    def __init__(self, display_name: str, window_id: int) -> None:
        self._display = x11.open_display(display_name)
        self._window = self._display.create_resource_object("window", window_id)
        self._at = 0.0
        self.rect = (0, 0, 0, 0)
        self.refresh(force=True)

    def refresh(self, force: bool = False) -> tuple[int, int, int, int]:
        now = time.monotonic()
        if force or now - self._at >= GEOMETRY_REFRESH_S:
            try:
                info = x11.describe(self._display, self._window)
            except Exception as exc:  # noqa: BLE001 - python-xlib raises XError subclasses and socket errors
                raise CaptureError(f"the game window is gone ({type(exc).__name__})") from None
            self.rect, self._at = (info.x, info.y, info.width, info.height), now
        return self.rect

    def close(self) -> None:
        with contextlib.suppress(Exception):  # the server may already be gone
            self._display.close()


class MssCapture:
    """XShmGetImage of the window's rectangle on the root window (about 1000 frames/s at 640x360)."""

    method = "mss"

    def __init__(self, display_name: str, window_id: int, crop: Crop) -> None:
        try:
            import mss
        except ImportError:
            raise GameStartError("mss is not installed; pip install -e '.[external]'") from None
        self._geometry = _Geometry(display_name, window_id)
        self._crop = crop
        factory = getattr(mss, "MSS", None) or mss.mss
        self._sct = factory(display=display_name)
        self._thread = threading.get_ident()  # mss's X connection belongs to the thread that made it

    def grab(self) -> np.ndarray:
        x, y, width, height = self._geometry.refresh()
        try:
            shot = self._sct.grab({"left": x, "top": y, "width": width, "height": height})
        except Exception as exc:  # noqa: BLE001 - mss raises ScreenShotError and X errors
            raise CaptureError(f"mss could not grab the game window: {exc}") from None
        return _bgra_to_rgb(shot.raw, shot.width, shot.height, self._crop)

    def close(self) -> None:
        try:
            self._sct.close()
        finally:
            self._geometry.close()


class XGetImageCapture:
    """XGetImage on the window itself through python-xlib: slower, but works where MIT-SHM does not."""

    method = "xgetimage"

    def __init__(self, display_name: str, window_id: int, crop: Crop) -> None:
        self._geometry = _Geometry(display_name, window_id)
        self._display = x11.open_display(display_name)
        self._window = self._display.create_resource_object("window", window_id)
        self._crop = crop
        X, *_ = x11.xlib_modules()
        self._zpixmap = X.ZPixmap

    def grab(self) -> np.ndarray:
        _, _, width, height = self._geometry.refresh()
        try:
            image = self._window.get_image(0, 0, width, height, self._zpixmap, 0xFFFFFFFF)
        except Exception as exc:  # noqa: BLE001
            raise CaptureError(f"XGetImage failed on the game window: {exc}") from None
        return _bgra_to_rgb(image.data, width, height, self._crop)

    def close(self) -> None:
        try:
            self._display.close()
        finally:
            self._geometry.close()


class WindowsGraphicsCapture:
    """Windows: the `windows-capture` package (Windows.Graphics.Capture), by window title. Untested here."""

    method = "windows-capture"

    def __init__(self, window_title: str, crop: Crop) -> None:
        try:
            from windows_capture import WindowsCapture
        except ImportError:
            raise GameStartError("windows-capture is not installed; on Windows: pip install windows-capture") from None
        self._crop = crop
        self._latest: np.ndarray | None = None
        self._lock = threading.Lock()
        self._closed = threading.Event()
        capture = WindowsCapture(cursor_capture=False, draw_border=False, window_name=window_title)

        @capture.event
        def on_frame_arrived(frame: Any, control: Any) -> None:
            if self._closed.is_set():
                control.stop()
                return
            bgra = np.asarray(frame.frame_buffer)
            with self._lock:
                self._latest = _bgra_to_rgb(bgra.tobytes(), bgra.shape[1], bgra.shape[0], self._crop)

        @capture.event
        def on_closed() -> None:
            self._closed.set()

        self._control = capture.start_free_threaded()

    def grab(self) -> np.ndarray:
        with self._lock:
            latest = self._latest
        if latest is None:
            if self._closed.is_set():
                raise CaptureError("the game window was closed")
            raise CaptureError("no frame from Windows.Graphics.Capture yet")
        return latest

    def close(self) -> None:
        self._closed.set()
        stop = getattr(self._control, "stop", None)
        if stop is not None:
            stop()


def open_capture(method: str, display_name: str | None, window_id: int | None, window_title: str,
                 crop: Crop) -> WindowCapture:
    if sys.platform == "win32" or method == "windows-capture":
        return WindowsGraphicsCapture(window_title, crop)
    if display_name is None or window_id is None:
        raise GameStartError("X11 capture needs the game's display and window")
    if method == "xgetimage":
        return XGetImageCapture(display_name, window_id, crop)
    try:
        return MssCapture(display_name, window_id, crop)
    except GameStartError:
        if method == "mss":
            raise
        return XGetImageCapture(display_name, window_id, crop)
