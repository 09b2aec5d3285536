"""Waiting for a launched game to be ready, and saying what it still waits for.

Ready is a sequence of conditions (the backend's `launch.ready`): a text in the game's log, its window, a still
picture. While one is unmet, a line every few seconds says which (logger `core.game.external.readiness`, which
the command line prints), and the error at the time limit names it. The wait ends at once, with the reason,
when the game process exits or its log or output holds one of `ready.fail_text`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

from core.game.errors import GameStartError
from core.game.external.launcher import Started, describe_output
from core.game.external.processes import exit_status
from core.game.external.spec import Ready

log = logging.getLogger(__name__)
REPORT_EVERY_S = 5.0  # how often a line says what is still awaited
POLL_S = 0.05
FAILURE_CHECK_S = 0.5  # how often the game's log and output are read for ready.fail_text


class ReadyWait:
    """One launch's wait: `waiting_for` names the condition now awaited; `check` raises GameStartError when the
    game exited, said it failed, or ran out of time, and says every few seconds what is still awaited."""

    def __init__(self, started: Started, ready: Ready, game_name: str, log_file: Path | None,
                 report_every_s: float = REPORT_EVERY_S) -> None:
        self.started = started
        self.ready = ready
        self.game_name = game_name
        self.log_file = log_file
        self.began = time.monotonic()
        self.deadline = self.began + ready.timeout_s
        self.report_every_s = report_every_s
        self.met: list[str] = []
        self._condition: Callable[[], str] = lambda: "the game to start"
        self._reported = self.began
        self._failure_checked = 0.0

    def waiting_for(self, condition: str | Callable[[], str]) -> None:
        """The condition now awaited (a text, or a function that describes it as it stands now)."""
        self._condition = condition if callable(condition) else (lambda: condition)

    def done(self, condition: str) -> None:
        """A condition was met: said once, and listed in a later error."""
        self.met.append(condition)
        log.debug("%s: %s after %.1f s", self.game_name, condition, time.monotonic() - self.began)

    @property
    def remaining_s(self) -> float:
        return self.deadline - time.monotonic()

    def check(self) -> None:
        """Raise if the wait cannot succeed; otherwise say, every few seconds, what it still waits for."""
        code = exit_status(self.started.process)
        if code is not None:
            from core.game.child import describe_exit

            raise GameStartError(f"the {self.game_name} game exited with {describe_exit(code)} during start-up, "
                                 f"while waiting for {self._condition()}.\n{self._output()}")
        failure = self._failure_line()
        if failure is not None:
            raise GameStartError(f"the {self.game_name} game reported a failure during start-up (ready.fail_text "
                                 f"matched): {failure!r}; stopped waiting for {self._condition()}.\n{self._output()}")
        now = time.monotonic()
        if now > self.deadline:
            met = f" (met: {'; '.join(self.met)})" if self.met else ""
            raise GameStartError(f"the {self.game_name} game was not ready within {self.ready.timeout_s:g} s "
                                 f"(launch.ready.timeout_s): still waiting for {self._condition()}{met}.\n"
                                 f"{self._output()}")
        if now - self._reported >= self.report_every_s:
            self._reported = now
            log.info("%s: still waiting for %s (%.0f s of %g s)", self.game_name, self._condition(), now - self.began,
                     self.ready.timeout_s)

    def _failure_line(self) -> str | None:
        """The first line of the game's log or output that holds one of ready.fail_text."""
        if not self.ready.fail_text or time.monotonic() - self._failure_checked < FAILURE_CHECK_S:
            return None
        self._failure_checked = time.monotonic()
        for path in (self.log_file, self.started.output_path):
            if path is None:
                continue
            try:
                text = path.read_text(errors="replace")
            except OSError:
                continue
            for line in text.splitlines():
                if any(needle in line for needle in self.ready.fail_text):
                    return line.strip()
        return None

    def _output(self) -> str:
        return describe_output(self.started, self.log_file)


def wait_for_log_text(wait: ReadyWait) -> None:
    """Until `ready.log_text` appears in `ready.log_file` (nothing to wait for when the backend names none)."""
    text, log_file = wait.ready.log_text, wait.log_file
    if not (text and log_file):
        return
    wait.waiting_for(f"the text {text!r} in {log_file} (launch.ready.log_text)")
    while True:
        wait.check()
        try:
            if text in log_file.read_text(errors="replace"):
                wait.done(f"the log holds {text!r}")
                return
        except OSError:
            pass  # not written yet
        time.sleep(POLL_S)
