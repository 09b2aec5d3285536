"""A real `python main.py ...` started as a terminal starts a foreground job: in a session and process
group of its own, so that a test can send Ctrl+C to the whole group exactly as the terminal would.
Output lines are collected by threads, so tests wait on them with deadlines instead of sleeping."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from core.paths import PROJECT_ROOT


class CliProcess:
    def __init__(self, args: list[str], env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen([sys.executable, "main.py", *args], cwd=PROJECT_ROOT, env=env, text=True,
                                        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        start_new_session=True)
        self.pid = self.process.pid
        self.lines: dict[str, list[str]] = {"stdout": [], "stderr": []}
        self._changed = threading.Condition()
        self._readers = [threading.Thread(target=self._read, args=(name,), daemon=True) for name in self.lines]
        for reader in self._readers:
            reader.start()
        self.seen_children: dict[int, str] = {}  # pid -> command line, for close()

    def _read(self, name: str) -> None:
        stream = self.process.stdout if name == "stdout" else self.process.stderr
        assert stream is not None
        # This thread owns the pipe and closes it at end of output: closing it from another thread while
        # a read is blocked on it would wait on the stream's lock.
        with stream:
            for line in stream:
                with self._changed:
                    self.lines[name].append(line.rstrip("\n"))
                    self._changed.notify_all()
        with self._changed:  # end of output: let waiters see that the process is ending
            self._changed.notify_all()

    def text(self, name: str) -> str:
        with self._changed:
            return "\n".join(self.lines[name])

    def wait_for_line(self, name: str, fragment: str, timeout: float) -> str:
        with self._changed:
            found = self._changed.wait_for(
                lambda: any(fragment in line for line in self.lines[name]) or self.process.poll() is not None,
                timeout)
            match = next((line for line in self.lines[name] if fragment in line), None)
        if match is None:
            state = "still running" if self.process.poll() is None else f"exited with {self.process.returncode}"
            raise AssertionError(f"no {name} line with {fragment!r} ({'it exited' if found else 'timed out'}, "
                                 f"{state}).\nstdout:\n{self.text('stdout')}\nstderr:\n{self.text('stderr')}")
        return match

    def interrupt(self) -> None:
        """What Ctrl+C in a terminal does: SIGINT to every process in the foreground process group."""
        os.killpg(self.pid, signal.SIGINT)

    def children(self) -> dict[int, str]:
        """Its direct children now: pid -> command line."""
        found = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            cmdline = command_line(int(entry.name))
            if int(stat.rsplit(")", 1)[1].split()[1]) == self.pid and cmdline is not None:
                found[int(entry.name)] = cmdline
        self.seen_children.update(found)
        return found

    def wait(self, timeout: float) -> int:
        code = self.process.wait(timeout=timeout)
        for reader in self._readers:
            reader.join(timeout=5)
        return code

    def close(self) -> None:
        """Whatever the test did, leave no process of its behind (and never touch a reused pid)."""
        if self.process.poll() is None:
            os.kill(self.pid, signal.SIGKILL)
            self.process.wait(timeout=10)
        for pid, cmdline in self.seen_children.items():
            if not gone(pid) and command_line(pid) == cmdline:
                os.kill(pid, signal.SIGKILL)
        for reader in self._readers:  # output ends once the children holding the pipes are gone
            reader.join(timeout=10)


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.05)


def command_line(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None


def gone(pid: int) -> bool:
    """Exited (a zombie, exited but not yet reaped, counts as exited)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True
