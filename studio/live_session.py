"""LiveSession: the built-in world, its evaluator and an episode runner, driven off the GUI thread.

Runner events arrive on the worker thread and are re-emitted as Qt signals, which Qt queues to
slots of objects living in the GUI thread. Frames and samples are not signalled at all: the
window pulls the newest frame and the new samples on timers (latest-wins, no queues).
"""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np
from PySide6.QtCore import QObject, Signal

from core.agents.actions import ActionSet
from core.agents.base import Decision
from core.evaluation.client import EvaluatorClient
from core.evaluation.profile import load_profile
from core.evaluation.sample import StateSample
from core.evaluation.tasks import Task, load_suite
from core.game.builtin import BuiltinWorld
from core.game.errors import GameError
from core.game.pad import PadState
from core.paths import PROFILES_DIR, RECORDINGS_DIR
from core.session.batch import BatchError, make_agent
from core.session.interventions import InterventionPolicy
from core.session.runner import EpisodeRunner, RunOptions


class LiveSession(QObject):
    sig_ready = Signal(str)              # world description, once the world and evaluator are up
    sig_error = Signal(str)              # an error to show the user
    sig_thinking = Signal(bool)          # the agent is being asked
    sig_step = Signal(dict)              # one executed step: numbers and record
    sig_metrics = Signal(dict)           # running metrics after each step
    sig_episode_started = Signal(dict)   # task id, budget, start, goal, recording path
    sig_episode_end = Signal(dict)       # the result

    def __init__(self, mode: str = "lockstep") -> None:
        super().__init__()
        self.mode = mode
        profile = load_profile(PROFILES_DIR / "builtin_world.yaml")
        self.actions = ActionSet.from_profile_data(profile.actions)
        self.tasks: list[Task] = load_suite(known_flags=profile.flags)
        self.world: BuiltinWorld | None = None
        self.evaluator: EvaluatorClient | None = None
        self.runner: EpisodeRunner | None = None
        self._thread: threading.Thread | None = None
        self._samples_seen = 0

    # -- lifecycle ------------------------------------------------------------------------
    def connect_world(self) -> None:
        threading.Thread(target=self._connect, name="studio-connect", daemon=True).start()

    def restart_world(self) -> None:
        """After the world died: close what is left and start a fresh world and evaluator."""
        if self.busy:
            self.stop()
            assert self._thread is not None
            self._thread.join(timeout=30)
        for part in (self.evaluator, self.world):
            if part is not None:
                part.close()
        self.world, self.evaluator, self.runner = None, None, None
        self._samples_seen = 0
        self.connect_world()

    def _connect(self) -> None:
        try:
            self.world = BuiltinWorld.launch(renderer="software", mode=self.mode)
            self.evaluator = EvaluatorClient.launch(self.world.pid)
            self.evaluator.wait_locked()
        except GameError as exc:
            self.sig_error.emit(f"Could not start the built-in world: {exc}")
            return
        info = self.world.info
        self.sig_ready.emit(f"{info.name} (pid {info.pid}, {info.width}x{info.height}, {info.mode})")

    @property
    def busy(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start_episode(self, task_id: str, granularity: str, agent_spec: str, intervention: str = "none",
                      budget: int | None = None) -> None:
        if self.world is None or self.evaluator is None:
            self.sig_error.emit("The world is not running yet.")
            return
        if self.busy:
            self.sig_error.emit("An episode is already running; stop it first.")
            return
        task = next(t for t in self.tasks if t.id == task_id)
        options = RunOptions(granularity=granularity, interventions=InterventionPolicy(intervention),
                             step_budget=budget)
        try:
            agent = make_agent(agent_spec, self.actions, 0, "discrete", {"granularity": granularity})
        except BatchError as exc:
            self.sig_error.emit(str(exc))
            return
        stamp = time.strftime("%Y%m%d-%H%M%S")
        path = RECORDINGS_DIR / f"{stamp}__{task.id}__{granularity}__{agent.name}.h5"
        runner = EpisodeRunner(self.world, self.evaluator, agent, self.actions, task, options, path)
        runner.events.sig_decision.connect(self._on_decision)
        runner.events.sig_step.connect(self.sig_step.emit)
        runner.events.sig_metrics.connect(self._on_metrics)
        runner.events.sig_frame.connect(lambda _frame: self.sig_thinking.emit(True))
        self.runner = runner
        self.sig_episode_started.emit({"task_id": task.id, "budget": budget or task.step_budget,
                                       "recording": str(path)})
        self._thread = threading.Thread(target=self._run, args=(runner,), name="studio-episode", daemon=True)
        self._thread.start()

    def _run(self, runner: EpisodeRunner) -> None:
        try:
            result = runner.run()
        except GameError as exc:  # set-up failures (the runner itself turns step failures into results)
            self.sig_error.emit(f"The episode could not run: {exc}")
            return
        self.sig_thinking.emit(False)
        if result.get("error"):
            self.sig_error.emit(result["error"])
        self.sig_episode_end.emit(result)

    def _on_decision(self, step: int, decision: Decision) -> None:
        self.sig_thinking.emit(False)

    def _on_metrics(self, metrics: dict[str, Any]) -> None:
        self.sig_metrics.emit(metrics)

    # -- pulled by the window's timers (GUI thread) --------------------------------------------
    def latest_frame(self) -> tuple[int, np.ndarray] | None:
        if self.world is None:
            return None
        try:
            frame = self.world.latest_frame()
        except GameError:
            return None
        return frame.frame_no, frame.pixels

    def new_samples(self) -> list[StateSample]:
        if self.evaluator is None:
            return []
        samples = self.evaluator.samples
        fresh = samples[self._samples_seen:]
        self._samples_seen = len(samples)
        return fresh

    # -- controls ---------------------------------------------------------------------------
    def pause(self) -> None:
        if self.runner:
            self.runner.pause()

    def resume(self) -> None:
        if self.runner:
            self.runner.resume()

    def step_once(self) -> None:
        if self.runner:
            self.runner.step_once()

    def stop(self) -> None:
        if self.runner:
            self.runner.stop()

    def take_over(self) -> None:
        if self.runner:
            self.runner.take_over()

    def hand_back(self) -> None:
        if self.runner:
            self.runner.resume()

    @property
    def taken_over(self) -> bool:
        return bool(self.runner and self.runner.taken_over)

    def human_input(self, pad: PadState, seconds: float) -> None:
        if self.runner:
            self.runner.human_input(pad, seconds)

    def intervene(self, kind: str, text: str = "") -> None:
        if self.runner:
            self.runner.request_intervention(kind, text)

    def close(self) -> None:
        self.stop()
        if self._thread is not None:
            self._thread.join(timeout=30)
        if self.evaluator is not None:
            self.evaluator.close()
        if self.world is not None:
            self.world.close()
