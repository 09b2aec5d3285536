"""The authoring panel's work on the live game: captures, going to a start state, trying a task.

Every job runs on the session's drive thread (LiveSession.run_on_world), after the key presses
already queued, so a capture records where the character ends up and a try never talks to the
world at the same time as the human's driving. Results come back as Qt signals, which Qt queues
to the panel's bound slots in the GUI thread. A try reports each step it takes and can be cancelled:
the world it drives is wrapped so that every hold counts, and a cancelled one ends the drive.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from functools import partial
from typing import Any, cast

from PySide6.QtCore import QObject, Signal

from core.authoring import try_task
from core.evaluation.client import EvaluatorClient
from core.evaluation.tasks import Task
from core.game.builtin import BuiltinWorld
from core.game.connection import Capability, GameConnection
from core.game.errors import GameError
from core.game.pad import PadState
from studio.live_session import LiveSession


class TryCancelled(GameError):
    """The user cancelled "Try it" (a GameError, so the try ends the way a failing game ends it)."""


class WatchedWorld:
    """The world, for a try: every hold is counted (progress) and refused once the try is cancelled."""

    def __init__(self, world: BuiltinWorld, on_step: Callable[[int], None], cancelled: threading.Event) -> None:
        self._world, self._on_step, self._cancelled = world, on_step, cancelled
        self.steps = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._world, name)

    def hold(self, pad: PadState, seconds: float) -> Any:
        if self._cancelled.is_set():
            raise TryCancelled("cancelled by the user")
        result = self._world.hold(pad, seconds)
        self.steps += 1
        self._on_step(self.steps)
        return result


class AuthoringWorker(QObject):
    sig_sampled = Signal(str, object)  # what the sample is for ("start", "goal", ...), the StateSample
    sig_tried = Signal(object)         # the TryResult of a task tried on the live game
    sig_failed = Signal(str, str)      # what was being done ("try", "goal", ...), the error for the user
    sig_try_step = Signal(int)         # steps the try has driven so far
    sig_try_cancelled = Signal()       # a cancelled try has ended (the game is back where it was)

    def __init__(self, session: LiveSession) -> None:
        super().__init__()  # no parent: queued jobs hold a reference, so it outlives a closed panel
        self.session = session
        self._cancel_try = threading.Event()

    # Each raises RuntimeError (a message for the user) while an episode runs or before the world is up.
    def sample(self, purpose: str) -> None:
        """The evaluator's reading once the input queued so far has been played."""
        self._watch(purpose, self.session.run_on_world(partial(self._sample, purpose)))

    def go_to(self, start: str | dict[str, Any]) -> None:
        """Reset the game to a start state; the reading after it comes back as an "at_start" sample."""
        self._watch("start", self.session.run_on_world(partial(self._go_to, start)))

    def try_out(self, task: Task) -> None:
        """Try the task on the live game, then put the game back as it was (when it keeps save states)."""
        self._cancel_try = threading.Event()
        self._watch("try", self.session.run_on_world(partial(self._try, task, self._cancel_try)))

    def cancel_try(self) -> None:
        """Stop the try in progress after its current step; the game is put back as it was."""
        self._cancel_try.set()

    def _watch(self, purpose: str, job: Future[None]) -> None:
        """A job cancelled before it ran (the world was restarted or closed) still gets an answer."""
        job.add_done_callback(lambda done: self.sig_failed.emit(purpose, "cancelled: the world was restarted")
                              if done.cancelled() else None)

    # -- on the drive thread ------------------------------------------------------------------
    def _sample(self, purpose: str, world: BuiltinWorld, evaluator: EvaluatorClient) -> None:
        self._report(purpose, lambda: self.sig_sampled.emit(purpose, evaluator.sample_after(time.time())))

    def _go_to(self, start: str | dict[str, Any], world: BuiltinWorld, evaluator: EvaluatorClient) -> None:
        def reset() -> None:
            world.reset(start)
            self.sig_sampled.emit("at_start", evaluator.sample_after(time.time()))

        self._report("start", reset)

    def _try(self, task: Task, cancelled: threading.Event, world: BuiltinWorld, evaluator: EvaluatorClient) -> None:
        def run() -> None:
            saved = world.snapshot() if Capability.SAVE_STATES in world.info.capabilities else None
            watched = WatchedWorld(world, self.sig_try_step.emit, cancelled)
            # WatchedWorld passes everything but hold() on to the world: it is one (failures: outcome "game_error")
            result = try_task(task, cast(GameConnection, watched), evaluator)
            try:
                if saved is not None:
                    world.restore(saved)  # the author carries on where they were
            finally:
                if cancelled.is_set():
                    self.sig_try_cancelled.emit()
                else:
                    self.sig_tried.emit(result)

        self._report("try", run)

    def _report(self, purpose: str, job: Callable[[], None]) -> None:
        try:
            job()
        except GameError as exc:
            self.sig_failed.emit(purpose, str(exc))
        except Exception as exc:  # noqa: BLE001 - a bug must not die unseen in the executor: the user is told
            self.sig_failed.emit(purpose, f"{type(exc).__name__}: {exc}")
