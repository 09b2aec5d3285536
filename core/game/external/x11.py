"""X11 through python-xlib: find a game's window, give it input focus, and fake input with XTEST.

python-xlib is an optional dependency (the `external` extra), imported here lazily so that the
rest of the harness runs without it. A Display is not shared between threads: each user (input,
capture, the guard) opens its own.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from dataclasses import dataclass
from typing import Any

from core.game.errors import GameStartError


class X11Unavailable(GameStartError):
    """No X server to talk to, or python-xlib is missing; the message says what to do."""


def xlib_modules() -> Any:
    """(X, XK, display, error, xtest) from python-xlib, or X11Unavailable saying how to install it."""
    try:
        from Xlib import XK, X, display, error
        from Xlib.ext import xtest
    except ImportError:
        raise X11Unavailable("python-xlib is not installed; install the external-games extra: "
                             "pip install -e '.[external]'") from None
    return X, XK, display, error, xtest


def check_session(display_name: str | None) -> str:
    """The X display to use, or a clear message about why there is none (Wayland without X11 included)."""
    name = display_name or os.environ.get("DISPLAY", "")
    if name:
        return name
    if os.environ.get("WAYLAND_DISPLAY") or os.environ.get("XDG_SESSION_TYPE") == "wayland":
        raise X11Unavailable(
            "this is a Wayland session without X11: window capture and XTEST input need an X server. "
            "Run the game under XWayland (most games are; start it with DISPLAY set, e.g. DISPLAY=:0), "
            "or let PokeGym start its own Xvfb (backend `display: {xvfb: always}`), or use a backend with "
            "the uinput/vgamepad input device and a capture method your compositor allows.")
    raise X11Unavailable("no X display: DISPLAY is not set. Start an X server, or set the backend's "
                         "`display: {xvfb: auto}` so PokeGym starts its own Xvfb.")


def open_display(name: str) -> Any:
    _, _, display, _, _ = xlib_modules()
    try:
        return display.Display(name)
    except Exception as exc:  # noqa: BLE001 - python-xlib raises several unrelated types here
        raise X11Unavailable(f"cannot connect to the X display {name!r}: {exc}") from None


@dataclass(frozen=True)
class WindowInfo:
    window_id: int
    title: str
    x: int       # absolute position of the window's client area on the root window
    y: int
    width: int
    height: int
    pid: int | None


def _title(display: Any, window: Any) -> str:
    try:
        name = window.get_full_text_property(display.intern_atom("_NET_WM_NAME"))
        if not name:
            name = window.get_wm_name()
    except Exception:  # noqa: BLE001 - a window that vanished while we looked
        return ""
    if isinstance(name, bytes):
        name = name.decode(errors="replace")
    return name or ""


def _pid(display: Any, window: Any) -> int | None:
    try:
        prop = window.get_full_property(display.intern_atom("_NET_WM_PID"), 0)
    except Exception:  # noqa: BLE001
        return None
    return int(prop.value[0]) if prop is not None and len(prop.value) else None


def describe(display: Any, window: Any) -> WindowInfo:
    root = display.screen().root
    geometry = window.get_geometry()
    origin = root.translate_coords(window, 0, 0)
    return WindowInfo(window.id, _title(display, window), origin.x, origin.y, geometry.width, geometry.height,
                      _pid(display, window))


def _top_level(display: Any, window: Any) -> Any:
    """The root's child that holds `window` (its frame under a window manager)."""
    root = display.screen().root
    while True:
        parent = window.query_tree().parent
        if parent is None or parent.id == root.id:
            return window
        window = parent


def what_hides(display_name: str, window_id: int) -> str | None:
    """Why the screen does not show this window whole, or None when it does: it is unmapped or minimized,
    or named windows stacked above it overlap it (the screen's pixels there are theirs, and so are the
    captured frames). X's stacking order from query_tree is bottom to top."""
    X, _, _, error, _ = xlib_modules()
    display = open_display(display_name)
    try:
        window = display.create_resource_object("window", window_id)
        try:
            if window.get_attributes().map_state != X.IsViewable:
                return "the game's window is minimized or not shown"
            game = describe(display, window)
            top = _top_level(display, window)
            stack = display.screen().root.query_tree().children
        except error.XError:
            return "the game's window is gone"
        above: list[Any] = stack[[w.id for w in stack].index(top.id) + 1:] if top.id in [w.id for w in stack] else []
        for other in above:
            try:
                if other.get_attributes().map_state != X.IsViewable:
                    continue
                shape = describe(display, other)
            except error.XError:
                continue  # closed while we looked
            overlap_x = min(game.x + game.width, shape.x + shape.width) - max(game.x, shape.x)
            overlap_y = min(game.y + game.height, shape.y + shape.height) - max(game.y, shape.y)
            if overlap_x > 0 and overlap_y > 0:
                name = shape.title or _title(display, _first_named(display, other)) or f"window 0x{other.id:x}"
                return f"{name!r} covers the game's window"
        return None
    finally:
        display.close()


def _first_named(display: Any, window: Any) -> Any:
    """A frame's client (the window that carries the title), or the frame itself."""
    try:
        children = window.query_tree().children
    except Exception:  # noqa: BLE001 - gone while we looked
        return window
    return next((c for c in children if _title(display, c)), window)


def list_windows(display: Any) -> list[WindowInfo]:
    """Every viewable window with a title (larger than a pixel), in the order found."""
    X, _, _, error, _ = xlib_modules()
    found: list[WindowInfo] = []
    stack = [display.screen().root]
    while stack:
        window = stack.pop()
        try:
            children = window.query_tree().children
        except error.XError:
            continue
        stack.extend(children)
        if not _title(display, window):
            continue
        try:
            if window.get_attributes().map_state != X.IsViewable:
                continue
            info = describe(display, window)
        except error.XError:
            continue
        if info.width > 1 and info.height > 1:
            found.append(info)
    return found


def find_windows(display: Any, title_pattern: str, pid: int | None = None) -> list[WindowInfo]:
    """Viewable windows whose title matches `title_pattern` (a regex); those of `pid` first when known."""
    pattern = re.compile(title_pattern)
    found = [w for w in list_windows(display) if pattern.search(w.title)]
    found.sort(key=lambda w: (pid is None or w.pid != pid, w.window_id))
    return found


def describe_windows(windows: list[WindowInfo], limit: int = 12) -> str:
    """The windows a user could mean, as `'title' (pid N, WxH)`; says so when there are none."""
    if not windows:
        return "none (no window with a title is shown there)"
    shown = [f"{w.title!r} (pid {w.pid if w.pid is not None else 'unknown'}, {w.width}x{w.height})"
             for w in windows[:limit]]
    more = f" and {len(windows) - limit} more" if len(windows) > limit else ""
    return "; ".join(shown) + more


class XTestDevice:
    """Keys, mouse buttons and relative pointer motion through XTEST, on its own connection."""

    def __init__(self, display_name: str) -> None:
        self.display_name = display_name
        self._X, self._XK, _, _, self._xtest = xlib_modules()
        self._display = open_display(display_name)
        self._lock = threading.Lock()
        if not self._display.has_extension("XTEST"):
            raise X11Unavailable(f"the X server on {display_name} has no XTEST extension; keyboard and mouse "
                                 "input cannot be faked there")

    def keycode(self, key_name: str) -> int:
        keysym = self._XK.string_to_keysym(key_name)
        if keysym == 0 and len(key_name) == 1:
            keysym = ord(key_name)
        code = self._display.keysym_to_keycode(keysym) if keysym else 0
        if not code:
            raise ValueError(f"the X server has no key for {key_name!r} (use X keysym names: w, space, Shift_L, "
                             "Return, Up...)")
        return int(code)

    def key(self, keycode: int, down: bool) -> None:
        with self._lock:
            self._xtest.fake_input(self._display, self._X.KeyPress if down else self._X.KeyRelease, keycode)
            self._display.sync()

    def button(self, number: int, down: bool) -> None:
        with self._lock:
            self._xtest.fake_input(self._display, self._X.ButtonPress if down else self._X.ButtonRelease, number)
            self._display.sync()

    def move_relative(self, dx: int, dy: int) -> None:
        if dx == 0 and dy == 0:
            return
        with self._lock:
            self._xtest.fake_input(self._display, self._X.MotionNotify, detail=True, x=int(dx), y=int(dy))
            self._display.sync()

    def move_to(self, x: int, y: int) -> None:
        """Put the pointer at (x, y) on the root window (absolute motion): over a game's window before mouse look."""
        with self._lock:
            self._xtest.fake_input(self._display, self._X.MotionNotify, x=int(x), y=int(y))
            self._display.sync()

    def focus(self, window_id: int) -> None:
        """Give the window X input focus: games ignore XTEST input without it (FACTS: the focus trap)."""
        with self._lock:
            window = self._display.create_resource_object("window", window_id)
            window.raise_window()
            window.set_input_focus(self._X.RevertToParent, self._X.CurrentTime)
            self._display.sync()

    def focused_window(self) -> int:
        with self._lock:
            focus = self._display.get_input_focus().focus
            return int(focus) if isinstance(focus, int) else int(focus.id)

    def keys_down(self) -> set[int]:
        """Keycodes the X server currently holds down (every client's, not only ours)."""
        with self._lock:
            keymap = self._display.query_keymap()
        return {index * 8 + bit for index, byte in enumerate(keymap) for bit in range(8) if byte >> bit & 1}

    def buttons_down(self) -> set[int]:
        with self._lock:
            mask = self._display.screen().root.query_pointer().mask
        return {number for number in range(1, 6) if mask & (1 << (7 + number))}

    def close(self) -> None:
        with self._lock, contextlib.suppress(Exception):  # the server may already be gone
            self._display.close()
