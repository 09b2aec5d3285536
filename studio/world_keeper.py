"""WorldKeeper: starts, restarts and closes the game (the built-in world, or any backend chosen in the
studio's Game menu) and its evaluator on one worker thread.

Starting a world takes seconds and stopping one can take many more (the episode in progress ends its
step, the processes shut down), so none of it runs on the GUI thread: start() and restart() queue a
job and return at once. One worker runs the jobs in order and a generation number names the newest
request, so a restart pressed while the first world is still starting closes that world as soon as
it exists, and exactly one world is ever kept. Every failure, of any type, reaches `on_error(message, kind)`
(kind: studio/status_messages.py's error_kind).

A restarted world is closed on a thread of its own, once the episode using it has ended: an agent in
the middle of a model call finishes its step and stops cleanly (its recording says "stopped"), and
meanwhile the new world starts.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np

from core.backends.profile import BackendProfile
from core.backends.session import BackendSession
from core.evaluation.client import EvaluatorClient
from core.game.connection import Capability, GameConnection
from core.game.errors import GameError
from studio.status_messages import error_kind
from studio.unexpected import unexpected

if TYPE_CHECKING:
    from core.game.builtin import BuiltinWorld

log = logging.getLogger("studio.world")
Outline = list[tuple[str, np.ndarray]]
LOCK_TIMEOUT_S = 60.0


def describe(exc: BaseException, where: str = "starting the game") -> str:
    """An error for the user: our own errors speak for themselves; anything else is unforeseen, so it is also
    logged with its traceback (studio.unexpected)."""
    return str(exc) if isinstance(exc, (GameError, PermissionError)) else unexpected(where, exc)


def game_name(backend: BackendProfile) -> str:
    return "the built-in world" if backend.kind == "builtin" else backend.title


class WorldKeeper:
    """`open_session(backend, with_evaluator=False, mode=..., evaluator_profile=...)` starts a game; the
    evaluator is started after it (so the game's frames show while the evaluator scans)."""

    def __init__(self, backend: BackendProfile, on_ready: Callable[[str], None], on_error: Callable[[str, str], None],
                 open_session: Callable[..., BackendSession] = BackendSession.open,
                 evaluator_profile: Path | None = None) -> None:
        self.backend = backend
        self.evaluator_profile = evaluator_profile
        self.lock_timeout_s = LOCK_TIMEOUT_S
        self._on_ready, self._on_error = on_ready, on_error
        self.open_session = open_session  # how a game is started (BackendSession.open), or attached to
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="studio-world")
        self._lock = threading.Lock()
        self._generation = 0
        self.session: BackendSession | None = None
        self.outline: Outline = []
        self.state = "idle"            # idle, starting, ready, failed, closed
        self.failure: str | None = None  # why the game or its evaluator is not usable, for Start to say
        self.launched: list[int] = []  # pids of every game launched (tests check none is left behind)
        self._closers: list[threading.Thread] = []

    @property
    def world(self) -> GameConnection | None:
        """The game being driven (named `world` from the days when it was always the built-in one)."""
        session = self.session
        return session.game if session is not None else None

    @property
    def evaluator(self) -> EvaluatorClient | None:
        """The evaluator reading the game, once it has locked on (an external game's restart brings a new
        one: the session keeps the current)."""
        session = self.session
        return session.evaluator if session is not None and self.state == "ready" else None

    # -- requests (any thread; they return at once) ---------------------------------------------
    def start(self, mode: str) -> bool:
        """Start a world unless one is running or starting; returns whether a start was queued."""
        with self._lock:
            if self.state in ("starting", "ready", "closed") or (self.state == "failed" and self.world is not None):
                return False
            self.state, self.failure = "starting", None
            generation = self._generation
        self._worker.submit(self._start, generation, mode, self.backend)
        return True

    def restart(self, mode: str, before_close: Callable[[], None], backend: BackendProfile | None = None) -> None:
        """Close the current game (after `before_close()`, run on the worker: e.g. wait for the episode
        to end) and start a fresh one, of `backend` if given. A newer request supersedes this one."""
        with self._lock:
            if self.state == "closed":
                return
            self._generation += 1
            generation = self._generation
            self.backend = backend or self.backend
            old = self.session
            self.session, self.outline = None, []
            self.state, self.failure = "starting", None
        self._worker.submit(self._restart, generation, mode, old, before_close, self.backend)

    def close(self, before_close: Callable[[], None], timeout: float = 30.0) -> None:
        """Stop for good: waits for a start in progress (its world is closed as soon as it exists), and
        (up to `timeout` each) for the worlds of earlier restarts to close."""
        with self._lock:
            self._generation += 1
            self.state = "closed"
            old = self.session
            self.session = None
        before_close()
        # The game first: a start still waiting for its evaluator to lock then ends at once (its evaluator
        # sees the game exit), instead of holding the quit for the whole lock timeout.
        self._close_parts(old)
        self._worker.shutdown(wait=True, cancel_futures=True)
        for closer in self._closers:
            closer.join(timeout)  # a world left behind still exits with this process (--owner-pid)

    # -- on the worker ---------------------------------------------------------------------------
    def _restart(self, generation: int, mode: str, old: BackendSession | None, before_close: Callable[[], None],
                 backend: BackendProfile) -> None:
        closer = threading.Thread(target=self._close_after, args=(old, before_close), name="studio-world-close",
                                  daemon=True)
        self._closers = [c for c in self._closers if c.is_alive()] + [closer]
        closer.start()
        if self._current(generation):
            self._start(generation, mode, backend)

    def _close_after(self, old: BackendSession | None, before_close: Callable[[], None]) -> None:
        try:
            before_close()  # the episode on the old game ends its step and stops
        except Exception:
            log.exception("waiting for the episode before a restart failed")
        self._close_parts(old)

    def _start(self, generation: int, mode: str, backend: BackendProfile) -> None:
        what = game_name(backend)
        try:
            session = self.open_session(backend, with_evaluator=False, mode=mode if backend.kind == "builtin" else None,
                                 evaluator_profile=self.evaluator_profile)
        except Exception as exc:  # noqa: BLE001 - any failure (a busy socket, a timeout...) must reach the user
            self._fail(generation, f"Could not start {what}: {describe(exc)}", error_kind(exc))
            return
        world = session.game
        self.launched.append(world.pid)
        if not self._publish(generation, session=session):
            self._close_parts(session)
            return
        try:
            # Opened without an evaluator (started here, once the world is up); a backend with no memory profile
            # yet has nothing to read the game with and runs without one.
            if session.evaluator_profile is not None:
                session.ensure_evaluator(self.lock_timeout_s)
            # A game with the MAP_OUTLINE capability has map_outline() (BuiltinWorld), which GameConnection lacks.
            outline = cast("BuiltinWorld", world).map_outline() if Capability.MAP_OUTLINE in world.info.capabilities \
                else []
        except Exception as exc:  # noqa: BLE001
            self._fail(generation, f"{what[0].upper()}{what[1:]} started, but the evaluator failed: "
                       f"{describe(exc, 'starting the evaluator')}",
                       error_kind(exc))
            return
        if not self._publish(generation, outline=outline, ready=True):
            return
        info = world.info
        log.info("world ready: %s, pid %d, %s", info.name, info.pid, info.mode)
        self._on_ready(f"{info.name} (pid {info.pid}, {info.width}x{info.height}, {info.mode})")

    def _current(self, generation: int) -> bool:
        with self._lock:
            return generation == self._generation and self.state != "closed"

    def _publish(self, generation: int, **parts: object) -> bool:
        with self._lock:
            if generation != self._generation or self.state == "closed":
                return False  # superseded by a restart or a close while starting
            ready = bool(parts.pop("ready", False))
            for name, value in parts.items():
                setattr(self, name, value)
            if ready:
                self.state = "ready"
            return True

    def _fail(self, generation: int, message: str, kind: str) -> None:
        with self._lock:
            if generation != self._generation or self.state == "closed":
                return
            self.state, self.failure = "failed", message
        log.error("%s", message)
        self._on_error(message, kind)

    @staticmethod
    def _close_parts(session: BackendSession | None) -> None:
        if session is None:
            return
        try:
            session.close()  # the evaluator, then the game (and, for external games, our Xvfb)
        except Exception:
            log.exception("closing the %s game failed", session.backend.name)
