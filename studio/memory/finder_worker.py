"""The Memory tab's long jobs: find the position, make a signature, verify it, try a profile.

Jobs that drive the live game are drives of the studio's GameHost (one at a time, on its drive
thread), so they never drive at the same time as a person or an episode, and the pad they hold shows
in the studio. Fresh game processes (a signature's further processes, verification) are headless
worlds of their own for the built-in world, and restarts of the live game for an external one
(Minetest): its backend's lifecycle, the same display, and the Live view keeps showing it. Progress,
results and errors come back as signals, which Qt queues to the view's bound slots; cancel is an Event
checked between steps.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from core.evaluation.client import EvaluatorClient, EvaluatorError
from core.evaluation.profile import Profile, ProfileError, load_profile
from core.finder.backends import Backend, BackendError, finder_plan, resolve
from core.finder.build import BuildOptions, SignatureBuilder
from core.finder.motion import FinderCancelled, FinderError
from core.finder.position import FinderOptions, PositionFinder
from core.finder.ranking import RankedTriple
from core.finder.verify import verify_profile
from core.game.errors import GameError
from core.game.pad import PadState
from core.memory.regions import MemoryAccessError
from studio.game_host import GameHost
from studio.observed_game import ObservedGame
from studio.unexpected import unexpected

_FAILURES = (FinderError, GameError, EvaluatorError, MemoryAccessError, ProcessLookupError, ProfileError, OSError,
             BackendError)
TRY_WALK = [PadState(left_y=1.0), PadState(left_x=1.0), PadState(left_y=-1.0), PadState(left_x=-1.0)]


class LiveRestarts:
    """Fresh processes of the live external game for the signature builder: each call restarts it (from a
    drive, on the host's drive thread) and gives the new process, observed."""

    def __init__(self, host: GameHost) -> None:
        self.host = host

    def __call__(self) -> ObservedGame:
        return self.host.restart_game()


@dataclass(frozen=True)
class Units:
    """How the profile reports the position: sample value = stored value x scale."""

    scale: float = 1.0
    units: str | None = None


class FinderWorker(QObject):
    sig_progress = Signal(str, float, int)  # what is happening, fraction done, candidates left
    sig_found = Signal(object)              # PositionResult
    sig_built = Signal(object)              # BuildResult
    sig_verified = Signal(object)           # VerifyResult
    sig_path = Signal(object)               # list of (x, y) read through a tried profile
    sig_failed = Signal(str, str)           # the job, a message for the user
    sig_finished = Signal(str)              # the job, done (whatever the outcome)

    def __init__(self, host: GameHost) -> None:
        super().__init__()
        self.host = host
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
        except Exception as exc:  # noqa: BLE001 - a worker's last resort: logged with its traceback, and shown
            self.sig_failed.emit(name, unexpected(f"the Memory tab's {name}", exc))
        finally:
            self.sig_finished.emit(name)

    def _on_world(self, name: str, job: Any) -> None:
        """Run job(game) as a drive of the live game; RuntimeError (an episode runs) goes to the user."""
        self.cancel.clear()
        try:
            future: Future[None] = self.host.drive(lambda game, _: self._run(name, lambda: job(game)))
        except RuntimeError as exc:
            self.sig_failed.emit(name, str(exc))
            self.sig_finished.emit(name)
            return
        future.add_done_callback(lambda done: (self.sig_failed.emit(name, "cancelled: the game was restarted"),
                                               self.sig_finished.emit(name)) if done.cancelled() else None)

    # -- jobs ------------------------------------------------------------------------------------
    def find_position(self, rounds: int = 3) -> None:
        def job(game: ObservedGame) -> None:
            # The backend's own timings: Red Eclipse slides on for 0.7 s after a walk, and the default 0.4 s of
            # rest threw its true position out as noise (the command line always used the backend's).
            options = FinderOptions(plan=replace(finder_plan(self.host.backend), rounds=rounds))
            finder = PositionFinder(game, options=options)
            try:
                self.sig_found.emit(finder.run(self._progress, self.cancel))
            finally:
                finder.close()

        self._on_world("find", job)

    def _backend(self) -> Backend:
        return resolve(str(self.host.backend.path))

    def make_signature(self, candidate: RankedTriple, name: str, units: Units,
                       alternatives: list[RankedTriple] | None = None) -> None:
        """From the live game's candidate, then further processes: fresh headless worlds for the built-in
        one, restarts of the live game for an external one. `alternatives`: the search's other candidates in the
        live game, should the chosen one's struct be crowded (core/finder/build.py)."""
        backend = self._backend()
        launcher = backend.launch if not backend.realtime else LiveRestarts(self.host)

        def job(game: ObservedGame) -> None:
            options = BuildOptions(name=name, game=backend.game, game_version=backend.game_version,
                                   scale=units.scale, units=units.units, plan=backend.plan,
                                   finder=FinderOptions(plan=backend.plan))
            builder = SignatureBuilder(launcher, options, self._progress, self.cancel)
            try:
                self.sig_built.emit(builder.build(game, candidate.address, candidate.vertical, candidate.speed,
                                                  candidate.right_turn, alternatives))
            finally:
                backend.close()

        self._on_world("signature", job)

    def verify(self, profile: Profile, right_turn: float | None = None) -> None:
        """On a fresh process: the live one proves nothing about restarts. A fresh headless world for the
        built-in world; a restart of the live game for an external one. `right_turn`: the found copy's, when the
        profile was just built from it (the position read must not be its mirror image)."""
        backend = self._backend()
        if backend.realtime:
            def on_live(_game: ObservedGame) -> None:
                self.sig_progress.emit("restarting the game to verify on a fresh process", 0.1, 0)
                fresh = LiveRestarts(self.host)()
                self.sig_verified.emit(verify_profile(fresh, profile, backend.plan,
                                                      expected_right_turn=right_turn))

            self._on_world("verify", on_live)
            return

        def job() -> None:
            self.sig_progress.emit("starting a fresh world to verify on", 0.1, 0)
            with backend:
                game = backend.launch()
                try:
                    self.sig_verified.emit(verify_profile(game, profile, backend.plan,
                                                          expected_right_turn=right_turn))
                finally:
                    game.close()

        self.cancel.clear()
        self._fresh.submit(self._run, "verify", job)

    def try_profile(self, path: Path) -> None:
        """Run the evaluator with the profile on the live game while the character walks a square, and
        hand back the positions it read."""
        def job(game: ObservedGame) -> None:
            load_profile(path).check_usable()
            with EvaluatorClient.launch(game.pid, profile=path) as evaluator:
                evaluator.wait_locked(timeout=30)
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
