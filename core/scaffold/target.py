"""The game the scaffold measures: started by us (under our own Xvfb, or on the user's display) or attached to,
with its window found. Ending it ends exactly what we started (the game's process group, our Xvfb)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from core.game.errors import GameStartError
from core.game.external.processes import end_process_group, exit_status
from core.game.external.x11 import WindowInfo, check_session, describe_windows, list_windows, open_display
from core.game.external.xvfb import Xvfb
from core.scaffold.errors import ScaffoldError
from core.scaffold.windows import game_windows, pick_window, process_tree

POLL_S = 0.1
RETITLE_S = 10.0   # the game's window shown this long and --window still matches none: say so


@dataclass
class Target:
    """A running game: its pid, the X display it shows on, and (when we started it) its process and output."""

    pid: int
    display: str
    own_display: bool
    command: list[str]
    env: dict[str, str] = field(default_factory=dict[str, str])
    process: subprocess.Popen[bytes] | None = None
    output_path: Path | None = None
    xvfb: Xvfb | None = None
    started_at: float = field(default_factory=time.monotonic)

    @classmethod
    def start(cls, command: str, env: dict[str, str], display: str | None, screen: str) -> Target:
        """Start `command` as our child in its own session, on our own Xvfb unless `display` names the user's."""
        words = shlex.split(command)
        if not words:
            raise ScaffoldError("--command is empty: give the command line that starts the game")
        executable = shutil.which(words[0]) or shutil.which(words[0], path="/usr/games")
        if executable is None:
            raise ScaffoldError(f"{words[0]!r} was not found on PATH (nor in /usr/games): give its full path in "
                                "--command")
        xvfb: Xvfb | None = None
        try:
            if display is None:
                xvfb = Xvfb.start(screen)
                display = xvfb.display
            else:
                display = check_session(display)
        except GameStartError as exc:
            raise ScaffoldError(str(exc)) from None
        output = Path(tempfile.mkstemp(prefix="pokegym-scaffold-", suffix=".log")[1])
        with open(output, "wb") as sink:
            try:
                process = subprocess.Popen([executable, *words[1:]], env={**os.environ, **env, "DISPLAY": display},
                                           stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT,
                                           start_new_session=True)
            except OSError as exc:
                if xvfb is not None:
                    xvfb.stop()
                raise ScaffoldError(f"could not start {executable}: {exc}") from None
        return cls(process.pid, display, xvfb is not None, [executable, *words[1:]], env, process, output, xvfb)

    @classmethod
    def attach(cls, pid: int, display: str | None) -> Target:
        """A game already running (its window on `display`, else $DISPLAY); it is left running at the end."""
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            raise ScaffoldError(f"no process has pid {pid} (--attach): start the game first, or use --command"
                                ) from None
        try:
            display = check_session(display)
        except GameStartError as exc:
            raise ScaffoldError(str(exc)) from None
        return cls(pid, display, False, [part.decode(errors="replace") for part in cmdline if part])

    @property
    def name(self) -> str:
        return Path(self.command[0]).name if self.command else str(self.pid)

    def exited(self) -> str | None:
        """Why the game is gone (its exit status and the tail of its output), or None while it runs."""
        if self.process is not None:
            code = exit_status(self.process)
            if code is None:
                return None
            tail = self.output_tail()
            return f"the game exited with status {code}" + (f"; its last output: {tail}" if tail else "")
        return None if Path(f"/proc/{self.pid}").exists() else "the game's process is gone"

    def output_tail(self, limit: int = 300) -> str:
        if self.output_path is None:
            return ""
        try:
            text = self.output_path.read_text(errors="replace").strip()
        except OSError:
            return ""
        return " | ".join(text[-limit:].splitlines()[-4:])

    def windows(self) -> tuple[list[WindowInfo], list[WindowInfo]]:
        """(every window shown on the display, the game's own among them)."""
        connection = open_display(self.display)
        try:
            shown = list_windows(connection)
        finally:
            connection.close()
        return shown, game_windows(shown, process_tree(self.pid), self.own_display)

    def wait_for_window(self, title_regex: str | None, timeout_s: float,
                        say: Callable[[str], None]) -> WindowInfo:
        """The game's window once shown (polled), or ScaffoldError naming what appeared instead."""
        deadline = time.monotonic() + timeout_s
        shown: list[WindowInfo] = []
        own_since: float | None = None
        while True:
            gone = self.exited()
            if gone is not None:
                raise ScaffoldError(f"{gone}. Check that the command starts the game on its own (try it in a "
                                    "terminal), then run this again")
            shown, own = self.windows()
            now = time.monotonic()
            own_since = (own_since or now) if own else None
            if own or (title_regex is not None and shown):
                try:
                    return pick_window(shown, own, title_regex)
                except ScaffoldError:
                    # The game's own window is there and the regex still names none: a title does change while a
                    # game loads, but not for this long.
                    if now >= deadline or (own_since is not None and now - own_since >= RETITLE_S):
                        raise
            if now >= deadline:
                raise ScaffoldError(f"no window of the game appeared on {self.display} within {timeout_s:.0f} s "
                                    f"(--timeout); windows shown: {describe_windows(shown)}. Give it longer with "
                                    "--timeout, or choose one with --window REGEX")
            time.sleep(POLL_S)

    def close(self) -> None:
        """End what we started (the game's process group, our Xvfb); an attached game is left running."""
        try:
            if self.process is not None:
                end_process_group(self.process, 5.0)
        finally:
            if self.xvfb is not None:
                self.xvfb.stop()
            if self.output_path is not None:
                self.output_path.unlink(missing_ok=True)
