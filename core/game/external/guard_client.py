"""Our end of the input guard's pipe (the guard itself: guard.py)."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading

from core.game.errors import GameStartError


class InputGuard:
    """Our end of the guard process's pipe (see guard.py)."""

    def __init__(self, display: str | None) -> None:
        from core.paths import PROJECT_ROOT

        self.process = subprocess.Popen([sys.executable, "-m", "core.game.external.guard", "--display", display or ""],
                                        cwd=PROJECT_ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        start_new_session=True)
        assert self.process.stdout is not None
        if self.process.stdout.readline().strip() != b"READY":
            raise GameStartError("the input guard process did not start")
        self._lock = threading.Lock()

    def say(self, line: str) -> None:
        with self._lock:
            if self.process.stdin is None or self.process.stdin.closed:
                return
            try:
                self.process.stdin.write(line.encode() + b"\n")
                self.process.stdin.flush()
            except (BrokenPipeError, OSError):
                pass

    def close(self) -> None:
        self.say("bye")
        with self._lock:
            if self.process.stdin is not None:
                with contextlib.suppress(OSError):
                    self.process.stdin.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
