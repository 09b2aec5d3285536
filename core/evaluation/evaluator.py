"""The evaluator process: attach to a game's pid, track its state block, stream samples, judge success.

It runs apart from the harness and the agent (code-level isolation): samples leave this process
only over its authenticated channel, to subscribers such as the runner and the studio, never to
an agent. Subscribers may set the active task's success condition. Success is judged only where a
subscriber asks for it: on the sample that ended an acting step (the agent's, a human's or the
privileged driver's), named by its time stamp, with the step's number and source. A push or a camera
turn between steps is never judged, so it cannot land the character in the goal and end the episode;
the next acting step does, if the condition still holds then (docs/evaluator.md).
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.connection import wait as connection_wait
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from core.evaluation.conditions import Condition, Judge
from core.evaluation.profile import Profile
from core.evaluation.sample import StateSample
from core.evaluation.tracker import BlockTracker
from core.game import child, ipc
from core.memory.readers import open_reader
from core.memory.regions import MemoryAccessError
from core.step_sources import JUDGED_SOURCES

_CONDITION = TypeAdapter(Condition)
RECENT_SAMPLES = 1024  # what a judge request may name: about 17 s at 60 Hz


@dataclass
class _Subscriber:
    conn: Connection
    wants_samples: bool = True


@dataclass
class _Task:
    judge: Judge
    reported: bool = False
    started: float = field(default_factory=time.time)


class EvaluatorServer:
    def __init__(self, pid: int, profile: Profile, endpoint: ipc.Endpoint, hz: float,
                 owner_pid: int | None) -> None:
        self.pid = pid
        self.profile = profile
        self.hz = hz
        self.owner_pid = owner_pid
        self.listener = ipc.listen(endpoint)
        self.subscribers: list[_Subscriber] = []
        self.lock = threading.Lock()
        self.task: _Task | None = None
        self.running = True
        self.flag_bits = {name: i for i, name in enumerate(profile.flags)}
        self.last_status: dict[str, Any] | None = None
        self.recent: deque[StateSample] = deque(maxlen=RECENT_SAMPLES)  # what judge requests may name

    def _accept_forever(self) -> None:
        while self.running:
            try:
                conn = self.listener.accept()
            except ipc.AuthenticationError:
                continue  # a client without the key: drop it, keep serving
            except OSError:
                return  # listener closed at shutdown
            with self.lock:
                self.subscribers.append(_Subscriber(conn))
                if self.last_status is not None:
                    # A subscriber that connects after the state settled (a pointer root locks on
                    # the very first sample) still learns it.
                    try:
                        ipc.send_message(conn, self.last_status)
                    except OSError:
                        self.subscribers.pop()

    def broadcast(self, message: dict[str, Any], samples_only: bool = False) -> None:
        with self.lock:
            alive: list[_Subscriber] = []
            for subscriber in self.subscribers:
                if samples_only and not subscriber.wants_samples:
                    alive.append(subscriber)
                    continue
                try:
                    ipc.send_message(subscriber.conn, message)
                    alive.append(subscriber)
                except OSError:
                    subscriber.conn.close()
            self.subscribers = alive

    def _handle_requests(self) -> bool:
        """Handle every waiting request; True when one asked for a sample now."""
        with self.lock:
            subscribers = list(self.subscribers)
        asked = False
        for subscriber in subscribers:
            try:
                while subscriber.conn.poll(0):
                    header, _ = ipc.receive_message(subscriber.conn)
                    asked = self._handle(subscriber, header) or asked
            except (EOFError, OSError, ipc.ProtocolError):
                with self.lock:
                    if subscriber in self.subscribers:
                        self.subscribers.remove(subscriber)
                subscriber.conn.close()
        return asked

    def _handle(self, subscriber: _Subscriber, header: dict[str, Any]) -> bool:
        """Handle one request; True when it asks for a sample now (`sample_now`)."""
        op = header.get("op")
        if op == "set_task":
            try:
                condition = _CONDITION.validate_python(header.get("success"))
                self.task = _Task(Judge(condition, self.flag_bits))
            except (ValidationError, ValueError) as exc:
                ipc.send_message(subscriber.conn, {"type": "error", "error": f"bad success condition: {exc}"})
                return False
            ipc.send_message(subscriber.conn, {"type": "task_set"})
            return False
        if op == "judge":
            self._judge(subscriber, header)
        elif op == "clear_task":
            self.task = None
        elif op == "samples":
            subscriber.wants_samples = bool(header.get("on", True))
        elif op == "sample_now":
            return True
        elif op == "shutdown":
            self.running = False
        return False

    def _judge(self, subscriber: _Subscriber, header: dict[str, Any]) -> None:
        """Judge the sample that ended an acting step: the one read at `time` (this process's own stamp), for
        step `step` of `source`. A success is broadcast to every subscriber before the answer to the asker."""
        request = header.get("request")
        source = str(header.get("source"))
        if source not in JUDGED_SOURCES:
            ipc.send_message(subscriber.conn, {"type": "judged", "request": request,
                                               "error": f"only acting steps are judged ({', '.join(JUDGED_SOURCES)}), "
                                                        f"not {source!r}"})
            return
        moment = header.get("time")
        sample = next((s for s in reversed(self.recent) if s.time == moment), None)
        if sample is None:
            ipc.send_message(subscriber.conn, {"type": "judged", "request": request,
                                               "error": f"no sample read at {moment!r} is kept any more (the last "
                                                        f"{RECENT_SAMPLES} are); judge a step as soon as it ends"})
            return
        task = self.task
        if task is not None and not task.reported and task.judge.update(sample):
            task.reported = True
            self.broadcast({"type": "success", "step": int(header.get("step", 0)), "source": source,
                            "time": sample.time, "elapsed": sample.time - task.started, "tick": sample.tick})
        ipc.send_message(subscriber.conn, {"type": "judged", "request": request,
                                           "success": bool(task is not None and task.judge.succeeded)})

    def _game_alive(self) -> bool:
        return child.pid_alive(self.pid)

    def _owner_alive(self) -> bool:
        return self.owner_pid is None or child.pid_alive(self.owner_pid)

    def serve(self) -> int:
        threading.Thread(target=self._accept_forever, name="evaluator-accept", daemon=True).start()
        try:
            reader = open_reader(self.pid)
        except (ProcessLookupError, MemoryAccessError) as exc:
            self._fatal(str(exc))
            return 3
        tracker = BlockTracker(reader, self.profile)
        period = 1.0 / self.hz
        last_state, last_scans = "", 0
        deadline = time.perf_counter()
        while self.running and self._owner_alive():
            asked = self._handle_requests()
            if not self.running:
                break
            if not asked and time.perf_counter() < deadline:
                # Woken by a request that needs no sample (a step number, a subscription): wait out the period.
                self._wait_for_requests(deadline - time.perf_counter())
                continue
            try:
                if not self._game_alive():
                    raise ProcessLookupError(self.pid)
                sample = tracker.sample()
            except ProcessLookupError:
                self.broadcast({"type": "status", "state": "game_exited",
                                "message": f"game process {self.pid} has exited"})
                return 0
            except MemoryAccessError as exc:
                self._fatal(str(exc))
                return 3
            status = tracker.status
            # Every change of state, and every finished scan while searching (so a caller waiting on a lock
            # can say how many scans found nothing). The last one is kept for clients that connect later.
            if status.state != last_state or (status.state != "locked" and status.scans != last_scans):
                last_state, last_scans = status.state, status.scans
                self.last_status = {"type": "status", "state": status.state, "address": status.address,
                                    "candidates": status.candidates, "message": status.message,
                                    "scan_seconds": status.last_scan_s}
                self.broadcast(self.last_status)
            if sample is not None:
                self.recent.append(sample)
                self.broadcast({"type": "sample", **sample.to_json()}, samples_only=True)
            deadline = max(deadline + period, time.perf_counter()) if not asked else time.perf_counter() + period
            self._wait_for_requests(deadline - time.perf_counter())
        return 0

    def _wait_for_requests(self, delay: float) -> None:
        """Sleep until the next sample is due, but wake at once for a subscriber's request: a runner asking
        for a fresh sample after a step should not wait up to 17 ms."""
        if delay <= 0:
            return
        with self.lock:
            connections = [s.conn for s in self.subscribers]
        if connections:
            connection_wait(connections, timeout=delay)
        else:
            time.sleep(delay)

    def _fatal(self, message: str) -> None:
        self.broadcast({"type": "status", "state": "failed", "message": message})

    def close(self) -> None:
        self.running = False
        self.listener.close()
        with self.lock:
            for subscriber in self.subscribers:
                subscriber.conn.close()


def run(pid: int, profile: Profile, runtime_dir: Path, hz: float, owner_pid: int | None) -> int:
    endpoint = ipc.Endpoint.from_json(json.loads((runtime_dir / "endpoint.json").read_text()))
    server = EvaluatorServer(pid, profile, endpoint, hz, owner_pid)
    print("READY " + json.dumps({"pid": os.getpid()}), flush=True)
    try:
        return server.serve()
    finally:
        server.close()
        if owner_pid is not None:
            # An evaluator launched for one owner ends with it (or with its game), so its folder has no further
            # use; the owner's own removal ignores a folder already gone. Asking whether the owner is alive raced
            # its death: a killed owner's sockets close (and its world exits) before it becomes a zombie.
            shutil.rmtree(runtime_dir, ignore_errors=True)
