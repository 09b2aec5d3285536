"""The Memory tab's long jobs: find the position, make a signature, verify it, try a profile.

Jobs that drive the live world run on the session's drive thread (LiveSession.run_on_world), so
they never drive at the same time as a person; the ones that need fresh game processes (verify)
start their own headless worlds on a separate thread. Progress, results and errors come back as
signals, which Qt queues to the view's bound slots; cancel is an Event checked between steps.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from core.evaluation.client import EvaluatorClient, EvaluatorError
from core.evaluation.profile import Profile, ProfileError, load_profile
from core.finder.backends import resolve
from core.finder.build import BuildOptions, SignatureBuilder
from core.finder.motion import FinderCancelled, FinderError, MotionPlan
from core.finder.position import FinderOptions, PositionFinder
from core.finder.ranking import RankedTriple
from core.finder.verify import verify_profile
from core.game.builtin import BuiltinWorld
from core.game.errors import GameError
from core.game.pad import PadState
from core.memory.regions import MemoryAccessError
from studio.live_session import LiveSession

_FAILURES = (FinderError, GameError, EvaluatorError, MemoryAccessError, ProcessLookupError, ProfileError, OSError)
TRY_WALK = [PadState(left_y=1.0), PadState(left_x=1.0), PadState(left_y=-1.0), PadState(left_x=-1.0)]


class LiveGame:
    """The live world as the finder sees it: holds show as the pad input in the studio, and closing
    it does nothing (the studio owns the world)."""

    def __init__(self, world: BuiltinWorld, session: LiveSession) -> None:
        self.world = world
        self.session = session

    @property
    def pid(self) -> int:
        return self.world.pid

    def hold(self, pad: PadState, seconds: float) -> Any:
        self.session.pad_held = pad
        started = time.monotonic()
        try:
            return self.world.hold(pad, seconds)
        finally:
            self.session.pad_held = None
            self.session.pad_log.append((started, time.monotonic(), pad))

    def close(self) -> None:
        pass


class FinderWorker(QObject):
    sig_progress = Signal(str, float, int)  # what is happening, fraction done, candidates left
    sig_found = Signal(object)              # PositionResult
    sig_built = Signal(object)              # BuildResult
    sig_verified = Signal(object)           # VerifyResult
    sig_path = Signal(object)               # list of (x, y) read through a tried profile
    sig_failed = Signal(str, str)           # the job, a message for the user
    sig_finished = Signal(str)              # the job, done (whatever the outcome)

    def __init__(self, session: LiveSession) -> None:
        super().__init__()
        self.session = session
        self.cancel = threading.Event()
        self._fresh = ThreadPoolExecutor(max_workers=1, thread_name_prefix="studio-memory-job")

    def _progress(self, what: str, fraction: float, left: int) -> None:
        self.sig_progress.emit(what, fraction, left)

    def _run(self, name: str, job: Any) -> None:
        try:
            job()
        except FinderCancelled:
            self.sig_failed.emit(name, "cancelled")
        except _FAILURES as exc:
            self.sig_failed.emit(name, str(exc))
        except Exception as exc:  # a worker's last resort: the user sees it, and the error propagates
            self.sig_failed.emit(name, f"unexpected {type(exc).__name__}: {exc}")
            raise
        finally:
            self.sig_finished.emit(name)

    def _on_world(self, name: str, job: Any) -> None:
        """Run job(world) on the drive thread; RuntimeError (an episode runs) goes to the user."""
        self.cancel.clear()
        try:
            future: Future[None] = self.session.run_on_world(lambda world, _: self._run(name, lambda: job(world)))
        except RuntimeError as exc:
            self.sig_failed.emit(name, str(exc))
            self.sig_finished.emit(name)
            return
        future.add_done_callback(lambda done: (self.sig_failed.emit(name, "cancelled: the world was restarted"),
                                               self.sig_finished.emit(name)) if done.cancelled() else None)

    # -- jobs ------------------------------------------------------------------------------------
    def find_position(self, rounds: int = 3) -> None:
        def job(world: BuiltinWorld) -> None:
            options = FinderOptions(plan=MotionPlan(rounds=rounds))
            finder = PositionFinder(LiveGame(world, self.session), options=options)
            try:
                self.sig_found.emit(finder.run(self._progress, self.cancel))
            finally:
                finder.close()

        self._on_world("find", job)

    def make_signature(self, candidate: RankedTriple, name: str) -> None:
        backend = resolve("builtin", start_state=None)

        def job(world: BuiltinWorld) -> None:
            options = BuildOptions(name=name, game=backend.game, game_version=backend.game_version)
            builder = SignatureBuilder(backend.launch, options, self._progress, self.cancel)
            self.sig_built.emit(builder.build(LiveGame(world, self.session), candidate.address, candidate.vertical,
                                              candidate.speed))

        self._on_world("signature", job)

    def verify(self, profile: Profile) -> None:
        """On a fresh world: the live one proves nothing about restarts."""
        backend = resolve("builtin")

        def job() -> None:
            self.sig_progress.emit("starting a fresh world to verify on", 0.1, 0)
            game = backend.launch()
            try:
                self.sig_verified.emit(verify_profile(game, profile, backend.plan))
            finally:
                game.close()

        self.cancel.clear()
        self._fresh.submit(self._run, "verify", job)

    def try_profile(self, path: Path) -> None:
        """Run the evaluator with the profile on the live world while the character walks a square, and
        hand back the positions it read."""
        def job(world: BuiltinWorld) -> None:
            load_profile(path).check_usable()
            with EvaluatorClient.launch(world.pid, profile=path) as evaluator:
                evaluator.wait_locked(timeout=30)
                game = LiveGame(world, self.session)
                points: list[tuple[float, float]] = []
                for index, pad in enumerate(TRY_WALK):
                    for _ in range(5):  # sampled after each short hold: a lockstep world has no wall clock
                        if self.cancel.is_set():
                            raise FinderCancelled("cancelled")
                        game.hold(pad, 0.2)
                        sample = evaluator.sample_after(time.time())
                        points.append((sample.x, sample.y))
                    self.sig_progress.emit("walking a square with the profile's evaluator", (index + 1) / 4, 0)
                self.sig_path.emit(points)

        self._on_world("try", job)

    def close(self) -> None:
        self.cancel.set()
        self._fresh.shutdown(wait=True, cancel_futures=True)
