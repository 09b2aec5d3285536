"""GameHost: the one owner of the live game in the studio.

It holds the game chosen in the Game menu (the built-in world or an external backend) with its memory
profile, action set and tasks; the WorldKeeper that starts, restarts and closes its processes; and the one
drive thread. Everything that drives the game runs there, one drive at a time, through one ObservedGame
(studio/observed_game.py): an episode (its runner, including a person's steps after Take control), a
person's keys between episodes, the Author dock's captures and Try it, and the Memory tab's finder,
signature building and verification. So nothing ever drives the game at the same time as anything else,
the pad being held always shows, and a restart waits for the drive in progress.

A drive gets the game and its evaluator as they are when it starts (a restart in between gives the new
ones), and may restart an external game itself (restart_game). The episode itself (runner, controls and
its signals) is LiveSession's.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as futures_wait
from pathlib import Path
from typing import Literal, Protocol, cast

import numpy as np
from PySide6.QtCore import QObject, Signal

from core.audio.clip import AudioClip
from core.backends.profile import BackendProfile, load_backend, memory_profile_of
from core.backends.session import BackendSession
from core.evaluation.client import EvaluatorClient
from core.evaluation.profile import Profile
from core.evaluation.sample import StateSample
from core.evaluation.tasks import Task
from core.game.audio_ring import AudioHeld
from core.game.connection import GameConnection, GameInfo
from core.game.errors import GameError
from core.game.pad import PadState
from core.session.batch import backend_tasks
from studio.observed_game import DriveMonitor, ObservedGame
from studio.status_messages import error_kind
from studio.world_keeper import Outline, WorldKeeper

log = logging.getLogger("studio.game")
Drive = Callable[[ObservedGame, EvaluatorClient], None]
DriveKind = Literal["episode", "human", "job"]


class HeardGame(Protocol):
    """A game whose sound the studio can follow without driving it (the built-in world, an external game with
    sound): what its audio ring holds, and a read of it. Both read shared memory only."""

    @property
    def info(self) -> GameInfo: ...
    def audio_held(self) -> AudioHeld | None: ...
    def audio_ticks(self, first_tick: int, last_tick: int) -> AudioClip: ...


def attach_opener(target: str) -> Callable[..., BackendSession]:
    """How the keeper "opens" a game that is already running: it attaches (and leaves the game running)."""
    def open_session(backend: BackendProfile, with_evaluator: bool = True, mode: str | None = None,
                     evaluator_profile: Path | None = None) -> BackendSession:
        return BackendSession.attach_to(backend, target, with_evaluator=with_evaluator,
                                        evaluator_profile=evaluator_profile)

    return open_session


class GameHost(QObject):
    sig_ready = Signal(str)         # the game's description, once it and its evaluator are up
    sig_problem = Signal(str, str)  # an error for the user and its kind (status_messages.ErrorKind)

    def __init__(self, mode: str = "lockstep", backend: BackendProfile | None = None,
                 profile_path: Path | None = None, attach: str | None = None) -> None:
        """`profile_path`: read the game with this memory profile instead of the backend's own; `attach`:
        drive the game already running (BackendSession.attach_to) instead of launching one."""
        super().__init__()
        self.mode = mode
        self._use(backend or load_backend("builtin"))
        self.keeper = WorldKeeper(self.backend, self.sig_ready.emit, self.sig_problem.emit,
                                  open_session=attach_opener(attach) if attach else BackendSession.open,
                                  evaluator_profile=profile_path)
        self.monitor = DriveMonitor()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="studio-drive")
        self._drives: list[tuple[DriveKind, Future[None]]] = []
        self._lock = threading.Lock()
        self._current: DriveKind | None = None  # the kind of drive running now (on the drive thread)
        self._samples_seen = 0

    def _use(self, backend: BackendProfile) -> None:
        self.backend = backend
        # None: the backend has no memory profile yet (memory_profile: none): it plays and records, with no tasks
        self.profile: Profile | None = memory_profile_of(backend)
        self.actions = backend.action_set()
        self.tasks: list[Task] = backend_tasks(backend, self.profile.flags) if self.profile else []

    # -- what is being driven ------------------------------------------------------------------
    @property
    def flags(self) -> list[str]:
        """The game's flag names (none without a memory profile)."""
        return list(self.profile.flags) if self.profile is not None else []

    @property
    def position_units(self) -> str | None:
        """What the game's positions are in (its memory profile's `units`; None: unsaid or no profile)."""
        return self.profile.position_units if self.profile is not None else None

    @property
    def is_builtin(self) -> bool:
        return self.backend.kind == "builtin"

    @property
    def world(self) -> GameConnection | None:
        """The game's own connection (frames, info, capture statistics); drive it only through drive()."""
        return self.keeper.world

    @property
    def evaluator(self) -> EvaluatorClient | None:
        return self.keeper.evaluator

    @property
    def outline(self) -> Outline:
        return self.keeper.outline

    @property
    def pad_held(self) -> PadState | None:
        return self.monitor.held

    def task(self, task_id: str) -> Task:
        return next(t for t in self.tasks if t.id == task_id)

    def add_task(self, task: Task) -> None:
        """A task authored in the studio joins the list, replacing one with the same id."""
        self.tasks = [t for t in self.tasks if t.id != task.id] + [task]

    def status_line(self) -> str:
        """What feeds the Live view, for its status bar: the game, its frame rate and the input device."""
        game = self.world
        if game is None:
            return f"{self.backend.title}: not running"
        stats = getattr(game, "capture_stats", lambda: None)()
        if stats is not None:
            frames = f"capture {stats.fps:.0f} frames/s ({stats.method}, frame age p95 {stats.age_ms_p95:.0f} ms)"
            device = getattr(game, "input_description", "?")
        else:
            frames = f"{game.info.tick_hz:.0f} ticks/s {game.info.mode}, frames from shared memory"
            device = "virtual pad over the world's socket"
        return f"{self.backend.name} · {frames} · input: {device}"

    # -- pulled by the window's timers (GUI thread) --------------------------------------------
    def latest_frame(self) -> tuple[int, np.ndarray] | None:
        world = self.world
        if world is None:
            return None
        try:
            frame = world.latest_frame()
        except GameError:
            return None
        return frame.frame_no, frame.pixels

    def heard_game(self) -> HeardGame | None:
        """The game, to read its sound from any thread without a drive (the Live speaker's feeder); None while no
        game with sound runs. Its ring is read-only shared memory: nothing here waits for a drive or holds a pad."""
        world = self.world
        if world is None or world.info.audio is None or not hasattr(world, "audio_held"):
            return None
        return cast(HeardGame, world)

    def new_samples(self) -> list[StateSample]:
        evaluator = self.evaluator
        if evaluator is None:
            return []
        fresh, self._samples_seen, _dropped = evaluator.samples.since(self._samples_seen)
        return fresh

    def samples_from(self, cursor: int) -> None:
        """The next new_samples() starts at this sample index (an episode's reset, a restarted game)."""
        self._samples_seen = cursor

    def latest_sample(self) -> StateSample | None:
        evaluator = self.evaluator
        return evaluator.latest() if evaluator is not None else None

    def evaluator_state(self) -> dict[str, object]:
        evaluator = self.evaluator
        return dict(evaluator.status) if evaluator is not None else {"state": "absent"}  # the keeper says why

    # -- the processes ---------------------------------------------------------------------------
    def connect(self) -> None:
        """Start the game and its evaluator, unless they are running or starting (returns at once)."""
        if self.keeper.start(self.mode):
            self._samples_seen = 0

    def restart(self, mode: str | None = None, backend: BackendProfile | None = None,
                before_close: Callable[[], object] = lambda: None) -> None:
        """A fresh game and evaluator, of `backend` if given (the Game menu), in `mode` if given. Returns at
        once: drives not started are dropped, the one in progress is cancelled at its next hold (an episode
        is told to stop by its owner first, `before_close` waits for it), and the old processes close on the
        keeper's worker once the drive thread is free."""
        if mode is not None:
            self.mode = mode
        if backend is not None:
            self._use(backend)
            self.keeper.open_session = BackendSession.open  # a game chosen in the menu is launched, not attached
        drives = self._stop_drives()
        self._samples_seen = 0

        def wait() -> None:
            before_close()
            futures_wait(drives)  # a hold or a "Try it" must not share a closing pipe

        self.keeper.restart(self.mode, wait, backend)

    def close(self, before_close: Callable[[], object], timeout: float) -> None:
        """Close the game and its evaluator for good (waits, bounded: the application is exiting)."""
        drives = self._stop_drives()

        def wait() -> None:
            before_close()
            futures_wait(drives, timeout=timeout)

        self.keeper.close(wait)
        self._executor.shutdown(wait=True, cancel_futures=True)

    def _stop_drives(self) -> list[Future[None]]:
        with self._lock:
            drives = [future for _kind, future in self._drives]
            for future in drives:
                future.cancel()  # only those not started
            if self._current is not None and self._current != "episode":
                self.monitor.cancelled.set()  # its owner stops an episode: a cancelled hold would be its error
            self.monitor.unpaced.set()  # the hold in progress finishes at full speed
        return drives

    # -- driving (one drive at a time, on the drive thread) ---------------------------------------
    def drive(self, job: Drive, kind: DriveKind = "job", on_hold: Callable[[int], None] | None = None,
              ) -> Future[None]:
        """Run `job(game, evaluator)` on the drive thread after the drives already queued. `on_hold(n)` hears
        of each hold it makes. The job reports its own results and errors; a game that is gone by then
        fails the future with GameError. Raises RuntimeError, with a message for the user, before the game
        is up, and for a job while an episode runs."""
        if self.world is None or self.evaluator is None:
            raise RuntimeError(f"{self.backend.title} is not running yet.")
        with self._lock:
            self._drives = [(k, f) for k, f in self._drives if not f.done()]
            if kind == "job" and any(k == "episode" for k, _f in self._drives):
                raise RuntimeError("An episode is running: stop it first.")
            future = self._executor.submit(self._run_drive, job, kind, on_hold)
            self._drives.append((kind, future))
        return future

    def _run_drive(self, job: Drive, kind: DriveKind, on_hold: Callable[[int], None] | None) -> None:
        world, evaluator = self.world, self.evaluator
        if world is None or evaluator is None:
            raise GameError(f"{self.backend.title} is not running")
        with self._lock:
            self._current = kind
            self.monitor.begin_drive(on_hold)
        try:
            job(ObservedGame(world, self.monitor), evaluator)
        finally:
            with self._lock:
                self._current = None

    def hold(self, pad: PadState, seconds: float) -> None:
        """A person's hold between episodes (to look around, or to author a task): queued as a drive of its own,
        cancelled by cancel_holds() if it has not started."""
        self.drive(lambda game, _evaluator: self._human_hold(game, pad, seconds), kind="human")

    def _human_hold(self, game: ObservedGame, pad: PadState, seconds: float) -> None:
        try:
            game.hold(pad, seconds)
        except GameError as exc:
            self.sig_problem.emit(str(exc), error_kind(exc))

    def cancel_holds(self) -> None:
        """The key or stick was let go: drop the person's holds not started yet (the one in progress ends)."""
        with self._lock:
            for kind, future in self._drives:
                if kind == "human":
                    future.cancel()

    @property
    def holds_waiting(self) -> int:
        with self._lock:
            return sum(1 for kind, f in self._drives if kind == "human" and not f.running() and not f.done())

    @property
    def driving(self) -> bool:
        """Something is driving the game or waiting to (an episode, a try, a finder job, a person's hold)."""
        with self._lock:
            return any(not f.done() for _kind, f in self._drives)

    @property
    def episode_running(self) -> bool:
        """An episode is driving the game (or queued to)."""
        with self._lock:
            return any(kind == "episode" and not f.done() for kind, f in self._drives)

    def set_pace(self, rate: float | None) -> None:
        """Space a lockstep game's time out at `rate` × real time (None: as fast as it runs)."""
        self.monitor.rate = rate

    def cancel_drive(self) -> None:
        """The drive in progress refuses its next hold (Try it's Cancel)."""
        self.monitor.cancelled.set()

    def restart_game(self) -> ObservedGame:
        """From a drive: a fresh process of the current external game, in its default start state; the
        evaluator follows it. Returns the new process, observed."""
        session = self.keeper.session
        if session is None:
            raise GameError("the game is not running")
        session.restart()
        assert session.evaluator is not None
        self._samples_seen = len(session.evaluator.samples)  # the new evaluator's samples start afresh
        return ObservedGame(session.game, self.monitor)

    def prepare_episode(self, start: str | dict[str, object]) -> EvaluatorClient:
        """From an episode's drive: an external game restarted into the task's start state. Returns the
        evaluator that reads the new process."""
        session = self.keeper.session
        if session is None:
            raise GameError("the game is not running")
        session.prepare(start)
        assert session.evaluator is not None
        self._samples_seen = len(session.evaluator.samples)
        return session.evaluator
