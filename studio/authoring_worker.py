"""The authoring panel's work on the live game: captures, going to a start state, trying a task.

Every job runs on the session's drive thread (LiveSession.run_on_world), after the key presses
already queued, so a capture records where the character ends up and a try never talks to the
world at the same time as the human's driving. Results come back as Qt signals, which Qt queues
to the panel's bound slots in the GUI thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future
from functools import partial
from typing import Any

from PySide6.QtCore import QObject, Signal

from core.authoring import try_task
from core.evaluation.client import EvaluatorClient
from core.evaluation.tasks import Task
from core.game.builtin import BuiltinWorld
from core.game.connection import Capability
from core.game.errors import GameError
from studio.live_session import LiveSession


class AuthoringWorker(QObject):
    sig_sampled = Signal(str, object)  # what the sample is for ("start", "goal", ...), the StateSample
    sig_tried = Signal(object)         # the TryResult of a task tried on the live game
    sig_failed = Signal(str, str)      # what was being done ("try", "goal", ...), the error for the user

    def __init__(self, session: LiveSession) -> None:
        super().__init__()  # no parent: queued jobs hold a reference, so it outlives a closed panel
        self.session = session

    # Each raises RuntimeError (a message for the user) while an episode runs or before the world is up.
    def sample(self, purpose: str) -> None:
        """The evaluator's reading once the input queued so far has been played."""
        self._watch(purpose, self.session.run_on_world(partial(self._sample, purpose)))

    def go_to(self, start: str | dict[str, Any]) -> None:
        """Reset the game to a start state; the reading after it comes back as an "at_start" sample."""
        self._watch("start", self.session.run_on_world(partial(self._go_to, start)))

    def try_out(self, task: Task) -> None:
        """Try the task on the live game, then put the game back as it was (when it keeps save states)."""
        self._watch("try", self.session.run_on_world(partial(self._try, task)))

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

    def _try(self, task: Task, world: BuiltinWorld, evaluator: EvaluatorClient) -> None:
        def run() -> None:
            saved = world.snapshot() if Capability.SAVE_STATES in world.info.capabilities else None
            result = try_task(task, world, evaluator)  # game failures come back as the outcome "game_error"
            try:
                if saved is not None:
                    world.restore(saved)  # the author carries on where they were
            finally:
                self.sig_tried.emit(result)

        self._report("try", run)

    def _report(self, purpose: str, job: Callable[[], None]) -> None:
        try:
            job()
        except GameError as exc:
            self.sig_failed.emit(purpose, str(exc))
        except Exception as exc:  # noqa: BLE001 - a bug must not die unseen in the executor: the user is told
            self.sig_failed.emit(purpose, f"{type(exc).__name__}: {exc}")
