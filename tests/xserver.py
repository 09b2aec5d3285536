"""A real X server for tests of the studio on a desktop: Xvfb on a free display, and xdotool / xwininfo /
ImageMagick's `import` to drive and look at windows there.

The tests that use it skip when Xvfb or xdotool is missing, unless POKEGYM_REQUIRE_DESKTOP_TEST=1
(set by .ci/run, which installs them), where a missing tool is a failure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

TOOLS = ("Xvfb", "xdotool", "xwininfo", "import")


def require_tools() -> None:
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if not missing:
        return
    message = (f"the desktop tests need {', '.join(missing)}: apt-get install -y xvfb xdotool x11-utils imagemagick")
    if os.environ.get("POKEGYM_REQUIRE_DESKTOP_TEST") == "1":
        pytest.fail(message)
    pytest.skip(message)


@contextmanager
def xvfb(size: str = "1600x1000x24") -> Iterator[str]:
    """Start Xvfb on a display it picks itself (-displayfd), yield ":N", stop it afterwards."""
    require_tools()
    read_end, write_end = os.pipe()
    # -noreset: by default the server resets when its last client leaves, and a client connecting during the reset
    # (the studio starting while a test's xdotool just disconnected) is refused: "could not connect to display".
    server = subprocess.Popen(["Xvfb", "-displayfd", str(write_end), "-screen", "0", size, "-nolisten", "tcp",
                               "-noreset"],
                              pass_fds=(write_end,), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    os.close(write_end)
    try:
        with os.fdopen(read_end) as announced:
            number = announced.readline().strip()  # written once the server accepts connections
        if not number:
            raise RuntimeError(f"Xvfb did not start: {server.stderr.read().decode(errors='replace')[-2000:]}")
        yield f":{number}"
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        if server.stderr is not None:
            server.stderr.close()


def x_env(display: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    return {**env, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb", **extra}


def tool(display: str, *command: str, timeout: float = 30) -> str:
    result = subprocess.run(command, env={**os.environ, "DISPLAY": display}, capture_output=True, text=True,
                            timeout=timeout)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({result.returncode}): {result.stderr.strip()}")
    return result.stdout


def find_window(display: str, name: str, seconds: float = 60, owner: subprocess.Popen | None = None,
                owner_said: Callable[[], str] = str) -> str:
    """The id of a mapped window whose title matches `name`, waiting up to `seconds` for it; given the `owner`
    process that should show it, fail as soon as that process has exited, with what `owner_said`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if owner is not None and owner.poll() is not None:
            raise AssertionError(f"the program that should show {name!r} on {display} exited "
                                 f"({owner.returncode}) first; it said:\n{owner_said()}")
        result = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", name],
                                env={**os.environ, "DISPLAY": display}, capture_output=True, text=True, timeout=30)
        ids = result.stdout.split()
        if ids:
            return ids[0]
        time.sleep(0.2)
    raise AssertionError(f"no visible window named {name!r} appeared on {display} within {seconds:.0f} s")


def map_state(display: str, window: str) -> str:
    info = tool(display, "xwininfo", "-id", window)
    return next(line.split(":", 1)[1].strip() for line in info.splitlines() if "Map State" in line)


def screenshot(display: str, path: Path) -> Path:
    tool(display, "import", "-window", "root", str(path), timeout=60)
    return path


def pixels(path: Path) -> np.ndarray:
    """A PNG as an (H, W, 3) uint8 array (read with Qt: no extra image library)."""
    from PySide6.QtGui import QImage

    image = QImage(str(path)).convertToFormat(QImage.Format.Format_RGB888)
    rows = np.frombuffer(image.constBits(), np.uint8, image.sizeInBytes()).reshape(image.height(), -1)
    return rows[:, :image.width() * 3].reshape(image.height(), image.width(), 3).copy()


def screenshot_when(display: str, path: Path, shows: Callable[[np.ndarray], bool], seconds: float = 20) -> Path:
    """Take screenshots until one `shows` what is expected (the window repaints after it logs), or fail."""
    deadline = time.monotonic() + seconds
    while True:
        screenshot(display, path)
        if shows(pixels(path)):
            return path
        if time.monotonic() > deadline:
            raise AssertionError(f"the screen never showed what was expected; last screenshot: {path}")
        time.sleep(0.2)
