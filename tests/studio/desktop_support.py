"""The studio as a user starts it on a desktop: `python main.py ARGS` under an X display (Qt's xcb plugin),
its log lines collected, and the small helpers the desktop tests share to look at and drive it."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

from core.paths import PROJECT_ROOT
from tests.xserver import find_window, tool, x_env


class Studio:
    """`python main.py ARGS` under an X display, its log lines collected as they come."""

    def __init__(self, display: str, home: Path, *args: str) -> None:
        env = x_env(display, HOME=str(home), XDG_CONFIG_HOME=str(home / "config"),
                    POKEGYM_RECORDINGS=str(home / "recordings"))
        self.process = subprocess.Popen([sys.executable, "main.py", *args], cwd=PROJECT_ROOT, env=env,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        with self.process.stderr:  # this thread owns the pipe: it closes it at end of output
            for line in self.process.stderr:
                self.lines.append(line.rstrip())

    def wait_for_line(self, pattern: str, seconds: float = 90) -> re.Match[str]:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for line in list(self.lines):
                found = re.search(pattern, line)
                if found:
                    return found
            if self.process.poll() is not None and not self._reader.is_alive():
                break
            time.sleep(0.05)
        raise AssertionError(f"no log line matching {pattern!r}; the studio said:\n" + "\n".join(self.lines[-40:]))

    def window(self, display: str, name: str) -> str:
        """The id of the studio's visible window titled like `name`; fails at once if the studio exits first."""
        return find_window(display, name, owner=self.process, owner_said=lambda: "\n".join(self.lines[-40:]))

    def children(self) -> list[str]:
        """Command lines of this studio's child processes (the world and the evaluator, when running)."""
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                status = (entry / "status").read_text()
                if f"\nPPid:\t{self.process.pid}\n" in status:
                    found.append((entry / "cmdline").read_text().replace("\0", " "))
            except OSError:
                continue
        return found

    def end(self) -> None:
        """Whatever the test did: the studio killed if it still runs, reaped, its log read to the end."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(30)
        self._reader.join(30)

    def close(self, display: str, window: str) -> int:
        tool(display, "xdotool", "windowfocus", "--sync", window)
        tool(display, "xdotool", "key", "--clearmodifiers", "ctrl+q")
        try:
            return self.process.wait(60)
        except subprocess.TimeoutExpired:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()
            raise AssertionError("the studio did not quit on Ctrl+Q within 60 s") from None


def screenshot_path(tmp_path: Path, name: str) -> Path:
    folder = Path(os.environ.get("POKEGYM_SCREENSHOT_DIR") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder / name


def colour_count(image: np.ndarray, low: int, high: int) -> int:
    """Grey pixels (r == g == b) with a value in [low, high]."""
    grey = (image[..., 0] == image[..., 1]) & (image[..., 1] == image[..., 2])
    return int((grey & (image[..., 0] >= low) & (image[..., 0] <= high)).sum())


def focus(display: str, window: str) -> None:
    """Pointer over the game view and input focus on the window (no window manager runs here)."""
    geometry = tool(display, "xdotool", "getwindowgeometry", window)
    width, height = (int(v) for v in re.search(r"Geometry: (\d+)x(\d+)", geometry).groups())
    tool(display, "xdotool", "mousemove", "--window", window, str(width // 2), str(height // 2))
    tool(display, "xdotool", "click", "1")
    tool(display, "xdotool", "windowfocus", "--sync", window)


def logged_time(stamp: str) -> float:
    """The studio log's asctime ("2026-12-07 12:22:07,123", local time) as a Unix time."""
    whole, millis = stamp.split(",")
    return time.mktime(time.strptime(whole, "%Y-%m-%d %H:%M:%S")) + int(millis) / 1000
