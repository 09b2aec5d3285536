"""The authoring panel's work on the live game: captures, going to a start state, trying a task.

Every job is a drive of the studio's GameHost, after the key presses already queued, so a capture
records where the character ends up and a try never talks to the world at the same time as the
human's driving. Results come back as Qt signals, which Qt queues to the panel's bound slots in the
GUI thread. A try reports each hold it makes (the host's ObservedGame counts them) and can be
cancelled: its next hold then raises DriveCancelled, which ends the try like a failing game.
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
from core.game.connection import Capability, GameConnection
from core.game.errors import GameError
from studio.game_host import GameHost
from studio.observed_game import ObservedGame
from studio.unexpected import unexpected


class AuthoringWorker(QObject):
    sig_sampled = Signal(str, object)  # what the sample is for ("start", "goal", ...), the StateSample
    sig_tried = Signal(object)         # the TryResult of a task tried on the live game
    sig_failed = Signal(str, str)      # what was being done ("try", "goal", ...), the error for the user
    sig_try_step = Signal(int)         # steps the try has driven so far
    sig_try_cancelled = Signal()       # a cancelled try has ended (the game is back where it was)

    def __init__(self, host: GameHost) -> None:
        super().__init__()  # no parent: queued jobs hold a reference, so it outlives a closed panel
        self.host = host
        self._cancel_try = threading.Event()
        self._trying = threading.Event()  # the try's drive has started

    # Each raises RuntimeError (a message for the user) while an episode runs or before the world is up.
    def sample(self, purpose: str) -> None:
        """The evaluator's reading once the input queued so far has been played."""
        self._watch(purpose, self._drive(partial(self._sample, purpose)))

    def go_to(self, start: str | dict[str, Any]) -> None:
        """Reset the game to a start state; the reading after it comes back as an "at_start" sample."""
        self._watch("start", self._drive(partial(self._go_to, start)))

    def try_out(self, task: Task) -> None:
        """Try the task on the live game, then put the game back as it was (when it keeps save states)."""
        self._cancel_try = threading.Event()
        self._watch("try", self._drive(partial(self._try, task, self._cancel_try), on_hold=self.sig_try_step.emit))

    def cancel_try(self) -> None:
        """Stop the try in progress after its current step; the game is put back as it was."""
        self._cancel_try.set()
        if self._trying.is_set():
            self.host.cancel_drive()

    def _drive(self, job: Callable[[ObservedGame, EvaluatorClient], None],
               on_hold: Callable[[int], None] | None = None) -> Future[None]:
        if not self.host.is_builtin and self.host.world is not None:
            raise RuntimeError("Authoring tasks needs the built-in world (it places the character at captured "
                               f"starts); {self.host.backend.title} takes named start states only.")
        return self.host.drive(job, on_hold=on_hold)

    def _watch(self, purpose: str, job: Future[None]) -> None:
        """A job cancelled before it ran (the world was restarted or closed) still gets an answer."""
        job.add_done_callback(lambda done: self.sig_failed.emit(purpose, "cancelled: the world was restarted")
                              if done.cancelled() else None)

    # -- on the drive thread ------------------------------------------------------------------
    def _sample(self, purpose: str, world: ObservedGame, evaluator: EvaluatorClient) -> None:
        self._report(purpose, lambda: self.sig_sampled.emit(purpose, evaluator.sample_after(time.time())))

    def _go_to(self, start: str | dict[str, Any], world: ObservedGame, evaluator: EvaluatorClient) -> None:
        def reset() -> None:
            world.reset(start)
            self.sig_sampled.emit("at_start", evaluator.sample_after(time.time()))

        self._report("start", reset)

    def _try(self, task: Task, cancelled: threading.Event, world: ObservedGame, evaluator: EvaluatorClient) -> None:
        self._trying.set()
        if cancelled.is_set():  # cancelled while it waited for the drive thread
            self.host.cancel_drive()

        def run() -> None:
            saved = world.snapshot() if Capability.SAVE_STATES in world.info.capabilities else None
            # ObservedGame passes everything but its holds on to the world: it is one (failures: outcome "game_error")
            result = try_task(task, cast(GameConnection, world), evaluator)
            try:
                if saved is not None:
                    world.restore(saved)  # the author carries on where they were
            finally:
                if cancelled.is_set():
                    self.sig_try_cancelled.emit()
                else:
                    self.sig_tried.emit(result)

        try:
            self._report("try", run)
        finally:
            self._trying.clear()

    def _report(self, purpose: str, job: Callable[[], None]) -> None:
        try:
            job()
        except GameError as exc:
            self.sig_failed.emit(purpose, str(exc))
        except Exception as exc:  # noqa: BLE001 - a bug must not die unseen in the executor: logged, and shown
            self.sig_failed.emit(purpose, unexpected(f"the Author dock's {purpose}", exc))
