"""EvaluatorClient: start the evaluator process for a game's pid and subscribe to what it reports.

The runner and the studio use this; an agent never does. Messages arrive on a background
thread and are kept (every sample, for the episode file) and passed to callbacks.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.evaluation.sample import StateSample
from core.evaluation.sample_log import SampleLog
from core.game import child, ipc
from core.game.errors import GameError
from core.paths import PROFILES_DIR

BUILTIN_PROFILE = PROFILES_DIR / "builtin_world.yaml"


class EvaluatorError(GameError):
    """The evaluator failed, or did not report what was waited for in time."""


Listener = Callable[[dict[str, Any]], None]


class EvaluatorClient:
    def __init__(self, conn: Any, process: subprocess.Popen[bytes], runtime_dir: Path) -> None:
        self._conn = conn
        self._process = process
        self._runtime_dir = runtime_dir
        self._changed = threading.Condition()
        self._send_lock = threading.Lock()
        self.samples = SampleLog()
        self.status: dict[str, Any] = {"state": "starting"}
        self.successes: list[dict[str, Any]] = []
        self.errors: list[str] = []
        self._task_acks = 0
        self._judged: dict[int, dict[str, Any]] = {}  # answers to judge requests, by request number
        self._requests = 0
        self._listeners: list[Listener] = []
        self._closed = False
        self._thread = threading.Thread(target=self._receive, name="evaluator-client", daemon=True)
        self._thread.start()

    @classmethod
    def launch(cls, game_pid: int, profile: Path = BUILTIN_PROFILE, hz: float = 60.0,
               start_timeout: float = 60.0) -> EvaluatorClient:
        args = ["--pid", str(game_pid), "--profile", str(profile), "--hz", str(hz)]
        conn, process, runtime_dir = child.spawn_and_connect("core.evaluation", args, start_timeout,
                                                             deque(maxlen=40), "evaluator", "pokegym-eval-")
        return cls(conn, process, runtime_dir)

    # -- receiving ----------------------------------------------------------------------
    def subscribe(self, listener: Listener) -> None:
        """Call `listener(message)` on the receiving thread for every message from now on."""
        self._listeners.append(listener)

    def _receive(self) -> None:
        while not self._closed:
            try:
                message, _ = ipc.receive_message(self._conn)
            except (EOFError, OSError, ipc.ProtocolError, TypeError):  # TypeError: closed under us by close()
                with self._changed:
                    final = self.status.get("state") in ("game_exited", "failed")
                    if not self._closed and not final:  # keep the evaluator's own last word
                        self.status = {"state": "disconnected", "message": "the evaluator process went away"}
                    self._changed.notify_all()
                return
            kind = message.get("type")
            with self._changed:
                if kind == "sample":
                    message.pop("type")
                    self.samples.append(StateSample.from_json(message))
                    message["type"] = "sample"
                elif kind == "status":
                    self.status = message
                elif kind == "success":
                    self.successes.append(message)
                elif kind == "task_set":
                    self._task_acks += 1
                elif kind == "judged" and isinstance(message.get("request"), int):
                    self._judged[message["request"]] = message
                elif kind == "error":
                    self.errors.append(message["error"])
                self._changed.notify_all()
            for listener in list(self._listeners):
                listener(message)

    def wait_until(self, predicate: Callable[[], bool], timeout: float = 30.0, what: str = "the evaluator") -> None:
        deadline = time.monotonic() + timeout
        with self._changed:
            while not predicate():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise EvaluatorError(f"timed out after {timeout:.0f} s waiting for {what} "
                                         f"(evaluator status: {self.status.get('message', self.status['state'])})")
                self._changed.wait(remaining)

    def latest(self) -> StateSample | None:
        with self._changed:
            return self.samples[-1] if self.samples else None

    def sample_after(self, moment: float, timeout: float = 10.0) -> StateSample:
        """The first sample taken after `moment` (time.time()): what the game looks like now."""
        self._send({"op": "sample_now"})
        self.wait_until(lambda: bool(self.samples) and self.samples[-1].time > moment, timeout, "a fresh sample")
        latest = self.latest()
        assert latest is not None
        return latest

    def sample_for(self, tick: int | None, moment: float, timeout: float = 10.0) -> StateSample:
        """The sample for a step that ended at game tick `tick`: the newest sample once one with that tick or a
        later one has been read (core/evaluation/stepping.py). With `tick` None (the game's ticks are not the
        state block's) or a profile that reads no tick, the first sample read after `moment` (time.time())."""
        with self._changed:
            latest = self.samples[-1] if self.samples else None
        if tick is None or latest is None or latest.tick < 0:  # a profile that reads no tick: by the clock
            return self.sample_after(moment, timeout)
        if latest.tick >= tick:
            return latest  # already read (and any success it brought, which comes first): no round trip
        self._send({"op": "sample_now"})
        self.wait_until(lambda: bool(self.samples) and self.samples[-1].tick >= tick, timeout,
                        f"a sample at game tick {tick} or later")
        latest = self.latest()
        assert latest is not None
        return latest

    def wait_locked(self, timeout: float = 60.0) -> None:
        """Until the state block is found; an evaluator that ends first (its game exited, a fatal error, the
        process gone) is reported at once rather than after the whole timeout (closing a game while its
        evaluator scans must not wait a minute)."""
        ended = ("game_exited", "failed", "disconnected")
        self.wait_until(lambda: (self.status.get("state") == "locked" and bool(self.samples))
                        or self.status.get("state") in ended, timeout, "the state block to be found")
        if self.status.get("state") in ended:
            raise EvaluatorError(f"the evaluator stopped before it found the state block: "
                                 f"{self.status.get('message', self.status['state'])}")

    # -- sending ------------------------------------------------------------------------
    def _send(self, message: dict[str, Any]) -> None:
        with self._send_lock:
            try:
                ipc.send_message(self._conn, message)
            except OSError as exc:
                raise EvaluatorError(f"the evaluator process is gone ({exc})") from None

    def set_task(self, success: dict[str, Any], timeout: float = 10.0) -> None:
        with self._changed:
            acks, errors = self._task_acks, len(self.errors)
            self.successes.clear()
        self._send({"op": "set_task", "success": success})
        self.wait_until(lambda: self._task_acks > acks or len(self.errors) > errors, timeout, "the task to be set")
        if len(self.errors) > errors:
            raise EvaluatorError(self.errors[-1])

    def judge(self, sample: StateSample, step: int, source: str, timeout: float = 10.0) -> bool:
        """Ask the evaluator to judge the task on `sample` (one it sent), the end of acting step `step` by
        `source` (agent, privileged or human); True once the task has succeeded. Only such samples are ever
        judged: what happens between steps (a push, a camera turn) cannot meet the condition by itself."""
        with self._changed:
            self._requests += 1
            request = self._requests
        self._send({"op": "judge", "request": request, "time": sample.time, "step": step, "source": source})
        self.wait_until(lambda: request in self._judged, timeout, f"the evaluator to judge step {step}")
        with self._changed:
            answer = self._judged.pop(request)
        if "error" in answer:
            raise EvaluatorError(f"the evaluator could not judge step {step}: {answer['error']}")
        return bool(answer["success"])

    def clear_task(self) -> None:
        self._send({"op": "clear_task"})

    @property
    def pid(self) -> int:
        return self._process.pid

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(EvaluatorError):  # already gone: nothing to shut down
            self._send({"op": "shutdown"})
        self._conn.close()
        child.stop(self._process)
        shutil.rmtree(self._runtime_dir, ignore_errors=True)

    def __enter__(self) -> EvaluatorClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
