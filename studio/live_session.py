"""LiveSession: a game (the built-in world or an external backend), its evaluator and an episode runner,
driven off the GUI thread.

Runner events arrive on the worker thread and are re-emitted as Qt signals, which Qt queues to
slots of objects living in the GUI thread. Frames, samples and the pad being held are not
signalled at all: the window pulls the newest of each on timers (latest-wins, no queues).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as futures_wait
from typing import Any

import numpy as np
from PySide6.QtCore import QObject, Signal

from core.agents.actions import ActionSet
from core.agents.base import Decision
from core.agents.observe import ObservationOptions
from core.backends.profile import BackendProfile, load_backend
from core.backends.session import BackendSession
from core.evaluation.client import EvaluatorClient
from core.evaluation.profile import load_profile
from core.evaluation.sample import StateSample
from core.evaluation.tasks import Task
from core.game.connection import Capability, GameConnection
from core.game.errors import GameError
from core.game.pad import PadState
from core.paths import RECORDINGS_DIR
from core.session.batch import BatchError, backend_tasks, make_agent
from core.session.interventions import InterventionPolicy
from core.session.runner import EpisodeRunner, RunOptions
from studio.live_controls import LiveChoices

Outline = list[tuple[str, np.ndarray]]


class LiveSession(QObject):
    sig_ready = Signal(str)              # world description, once the world and evaluator are up
    sig_error = Signal(str)              # an error to show the user
    sig_thinking = Signal(bool)          # the agent is being asked
    sig_observation = Signal(int, dict)  # step, the images the agent is given: current/previous/left/right
    sig_step = Signal(dict)              # one executed step: numbers, record and the position after it
    sig_metrics = Signal(dict)           # running metrics after each step
    sig_episode_started = Signal(dict)   # task id, budget, recording path
    sig_episode_end = Signal(dict)       # the result

    def __init__(self, mode: str = "lockstep", backend: BackendProfile | None = None) -> None:
        super().__init__()
        self.mode = mode
        self._use(backend or load_backend("builtin"))
        self.parts: BackendSession | None = None
        self.runner: EpisodeRunner | None = None
        self.outline: Outline = []
        self.pad_held: PadState | None = None  # written by whichever thread drives the game
        # (start, end, pad) of recent holds (time.monotonic): a lockstep hold is over in milliseconds,
        # too quick for a display timer to see in pad_held (the Memory tab plots pad input from this).
        self.pad_log: deque[tuple[float, float, PadState]] = deque(maxlen=256)
        self._thread: threading.Thread | None = None
        self._driver = ThreadPoolExecutor(max_workers=1, thread_name_prefix="studio-drive")
        self._drives: list[Future[None]] = []
        self._samples_seen = 0
        self._last_sample: StateSample | None = None

    def _use(self, backend: BackendProfile) -> None:
        self.backend = backend
        self.profile = load_profile(backend.memory_profile_path)
        self.actions = ActionSet.from_profile_data(self.profile.actions)
        self.tasks: list[Task] = backend_tasks(backend, self.profile.flags)

    @property
    def world(self) -> GameConnection | None:
        """The game being driven (named `world` from the days when it was always the built-in one)."""
        return self.parts.game if self.parts is not None else None

    @property
    def evaluator(self) -> EvaluatorClient | None:
        return self.parts.evaluator if self.parts is not None else None

    @property
    def is_builtin(self) -> bool:
        return self.backend.kind == "builtin"

    # -- lifecycle ------------------------------------------------------------------------
    def switch_backend(self, backend: BackendProfile) -> None:
        """Drive another game: end the current one, load the backend's tasks, start it (GUI thread)."""
        self._shut_down_parts()
        self._use(backend)
        self.connect_world()

    def connect_world(self) -> None:
        threading.Thread(target=self._connect, name="studio-connect", daemon=True).start()

    def restart_world(self, mode: str | None = None) -> None:
        """Start a fresh world and evaluator (after the world died, or in another clock mode)."""
        self._shut_down_parts()
        if mode is not None:
            self.mode = mode
        self.connect_world()

    def _shut_down_parts(self) -> None:
        if self.busy:
            self.stop()
            assert self._thread is not None
            self._thread.join(timeout=30)  # the runner stops after the step (or model call) in progress
        for drive in self._drives:
            drive.cancel()
        futures_wait(self._drives, timeout=30)  # a hold or a "Try it" in progress must not share the pipe
        parts, self.parts, self.runner = self.parts, None, None
        if parts is not None:
            parts.close()
        self._samples_seen = 0

    def _connect(self) -> None:
        backend = self.backend
        try:
            parts = BackendSession.open(backend, mode=self.mode if backend.kind == "builtin" else None)
        except (GameError, PermissionError, ValueError) as exc:
            self.sig_error.emit(f"Could not start {backend.title}: {exc}")
            return
        if self.backend is not backend:  # the user chose another game meanwhile
            parts.close()
            return
        self.parts = parts
        world = parts.game
        outline = getattr(world, "map_outline", None)
        self.outline = outline() if outline is not None and Capability.MAP_OUTLINE in world.info.capabilities else []
        self._samples_seen = len(parts.evaluator.samples) if parts.evaluator is not None else 0
        info = world.info
        self.sig_ready.emit(f"{info.name} (pid {info.pid}, {info.width}x{info.height}, {info.mode})")

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

    @property
    def busy(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def task(self, task_id: str) -> Task:
        return next(t for t in self.tasks if t.id == task_id)

    def add_task(self, task: Task) -> None:
        """A task authored in the studio joins the list, replacing one with the same id."""
        self.tasks = [t for t in self.tasks if t.id != task.id] + [task]

    def start_episode(self, choices: LiveChoices) -> None:
        if self.world is None or self.evaluator is None:
            self.sig_error.emit("The world is not running yet.")
            return
        if self.busy:
            self.sig_error.emit("An episode is already running; stop it first.")
            return
        if any(not drive.done() for drive in self._drives):
            self.sig_error.emit("The world is still busy with a task try or your driving; start when it is done.")
            return
        task = self.task(choices.task_id)
        options = RunOptions(
            granularity=choices.granularity, paradigm=choices.paradigm,
            observation=ObservationOptions(previous_frame=choices.previous_frame, side_views=choices.side_views,
                                           side_view_mode=self.backend.side_views.default),
            interventions=InterventionPolicy(choices.intervention, k=choices.intervention_after),  # type: ignore[arg-type]
            step_budget=choices.budget, frame_every_ticks=choices.frames_every_ticks,
            settle_s=self.backend.step_settle_s)
        agent_options = {"granularity": choices.granularity, "model_id": choices.model_id,
                         "reflection_every": choices.reflection_every}
        try:
            agent = make_agent(choices.agent_spec, self.actions, 0, choices.paradigm, agent_options)
        except BatchError as exc:
            self.sig_error.emit(str(exc))
            return
        stamp = time.strftime("%Y%m%d-%H%M%S")
        path = RECORDINGS_DIR / f"{stamp}__{task.id}__{choices.granularity}__{agent.name}.h5"
        runner = EpisodeRunner(self.world, self.evaluator, agent, self.actions, task, options, path)
        runner.events.sig_observation.connect(self._on_observation)
        runner.events.sig_decision.connect(self._on_decision)
        runner.events.sig_pad.connect(self._on_pad)
        runner.events.sig_sample.connect(self._on_sample)
        runner.events.sig_step.connect(self._on_step)
        runner.events.sig_metrics.connect(self.sig_metrics.emit)
        self.runner = runner
        self.sig_episode_started.emit({"task_id": task.id, "budget": choices.budget or task.step_budget,
                                       "recording": str(path)})
        self._thread = threading.Thread(target=self._run, args=(runner,), name="studio-episode", daemon=True)
        self._thread.start()

    def _run(self, runner: EpisodeRunner) -> None:
        try:
            if self.parts is not None and not self.is_builtin:
                # An external game is restarted into the task's start state; the evaluator follows the new
                # process, and the runner must talk to that evaluator.
                self.parts.prepare(runner.task.start_for_reset())
                assert self.parts.evaluator is not None
                runner.evaluator = self.parts.evaluator
                self._samples_seen = len(runner.evaluator.samples)
            result = runner.run()
        except Exception as exc:  # noqa: BLE001 - set-up failures or bugs: the window must hear of them
            # The runner turns step failures into results itself; what reaches here stopped it early.
            message = f"The episode could not run: {type(exc).__name__}: {exc}"
            self.sig_thinking.emit(False)
            self.sig_error.emit(message)
            self.sig_episode_end.emit({"error": message, "end_reason": "error", "steps_used": runner.step,
                                       "recording": str(runner.record_path)})
            return
        self.sig_thinking.emit(False)
        if result.get("error"):
            self.sig_error.emit(result["error"])
        self.sig_episode_end.emit({**result, "recording": str(runner.record_path)})

    # -- runner callbacks (episode thread) ---------------------------------------------------
    def _on_observation(self, step: int, images: dict[str, Any]) -> None:
        self.sig_observation.emit(step, images)
        self.sig_thinking.emit(True)

    def _on_decision(self, step: int, decision: Decision) -> None:
        self.sig_thinking.emit(False)

    def _on_pad(self, pad: PadState | None) -> None:
        self.pad_held = pad

    def _on_sample(self, sample: StateSample) -> None:
        self._last_sample = sample

    def _on_step(self, record: dict[str, Any]) -> None:
        after = self._last_sample
        position = [after.x, after.y] if after is not None else None
        self.sig_step.emit({**record, "position": position})

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
        fresh, self._samples_seen, _dropped = self.evaluator.samples.since(self._samples_seen)
        return fresh

    def latest_sample(self) -> StateSample | None:
        return self.evaluator.latest() if self.evaluator is not None else None

    def evaluator_state(self) -> dict[str, Any]:
        return dict(self.evaluator.status) if self.evaluator is not None else {"state": "starting"}

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
        # Also before its thread has started: Start emits sig_episode_started first, and a human who took
        # control before Start keeps it from the first step.
        if self.runner is not None:
            self.runner.take_over()

    def hand_back(self) -> None:
        if self.runner:
            self.runner.resume()

    @property
    def taken_over(self) -> bool:
        return bool(self.runner and self.busy and self.runner.taken_over)

    def human_input(self, pad: PadState, seconds: float) -> None:
        """Drive the character: a recorded `human` step during a taken-over episode, or a plain
        hold between episodes (to look around or author a task)."""
        if self.taken_over:
            assert self.runner is not None
            self.runner.human_input(pad, seconds)
        elif not self.busy and self.world is not None:
            self._drives = [d for d in self._drives if not d.done()]
            self._drives.append(self._driver.submit(self._hold, self.world, pad, seconds))

    def run_on_world(self, job: Callable[[Any, EvaluatorClient], None]) -> Future[None]:
        """Run `job(world, evaluator)` on the drive thread between episodes, after the input already queued,
        so it never talks to the world at the same time as the human's driving (the authoring panel
        captures and tries tasks this way). The job reports its own results and errors. Raises
        RuntimeError, with a message for the user, while an episode runs or before the world is up."""
        if not self.is_builtin and self.world is not None:
            raise RuntimeError("Authoring tasks needs the built-in world (it places the character at captured "
                               f"starts); {self.backend.title} takes named start states only.")
        return self.run_on_game(job)

    def run_on_game(self, job: Callable[[Any, EvaluatorClient], None]) -> Future[None]:
        """As run_on_world, for any backend's game (the Memory tab's finder drives Minetest this way)."""
        if self.busy:
            raise RuntimeError("An episode is running: stop it first.")
        if self.world is None or self.evaluator is None:
            raise RuntimeError("The world is not running yet.")
        self._drives = [d for d in self._drives if not d.done()]
        future = self._driver.submit(job, self.world, self.evaluator)
        self._drives.append(future)
        return future

    def restart_game(self) -> int:
        """A fresh process of the current external game, in its default start state; the evaluator
        follows it. Call it from a job on the drive thread (run_on_game). Returns the new pid."""
        if self.parts is None:
            raise GameError("the game is not running")
        pid = self.parts.restart()
        assert self.parts.evaluator is not None
        self._samples_seen = len(self.parts.evaluator.samples)  # the new evaluator's samples start afresh
        return pid

    @property
    def human_inputs_waiting(self) -> int:
        if self.taken_over:
            assert self.runner is not None
            return self.runner.human_inputs_waiting
        return sum(1 for d in self._drives if not d.running() and not d.done())

    def _hold(self, world: GameConnection, pad: PadState, seconds: float) -> None:
        self.pad_held = pad
        started = time.monotonic()
        try:
            world.hold(pad, seconds)
        except GameError as exc:
            self.sig_error.emit(str(exc))
        finally:
            self.pad_held = None
            self.pad_log.append((started, time.monotonic(), pad))

    def intervene(self, kind: str, text: str = "") -> None:
        if self.runner and self.busy:
            self.runner.request_intervention(kind, text)

    def close(self) -> None:
        self._shut_down_parts()
        self._driver.shutdown(wait=True, cancel_futures=True)
