"""LiveSession: a game (the built-in world or an external backend), its evaluator and an episode runner,
driven off the GUI thread.

Runner events arrive on the worker thread and are re-emitted as Qt signals, which Qt queues to
slots of objects living in the GUI thread. Frames, samples and the pad being held are not
signalled at all: the window pulls the newest of each on timers (latest-wins, no queues). Starting,
restarting and closing the game run on the WorldKeeper's worker, so no call here waits for a process.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as futures_wait
from pathlib import Path
from typing import Any, cast

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
from core.game.builtin import BuiltinWorld
from core.game.connection import GameConnection
from core.game.errors import GameError
from core.game.pad import PadState
from core.paths import RECORDINGS_DIR
from core.session.batch import BatchError, backend_tasks, make_agent
from core.session.interventions import InterventionPolicy, Kind
from core.session.runner import EpisodeRunner, RunOptions
from studio.live_controls import LiveChoices
from studio.paced_game import PacedGame
from studio.status_messages import error_kind
from studio.world_keeper import WorldKeeper

log = logging.getLogger("studio.live")
Outline = list[tuple[str, np.ndarray]]
CLOSE_WAIT_S = 30.0  # how long closing the studio waits for the episode's step in progress


def attach_opener(target: str) -> Callable[..., BackendSession]:
    """How the keeper "opens" a game that is already running: it attaches (and leaves the game running)."""
    def open_session(backend: BackendProfile, with_evaluator: bool = True, mode: str | None = None,
                     evaluator_profile: Path | None = None) -> BackendSession:
        return BackendSession.attach_to(backend, target, with_evaluator=with_evaluator,
                                        evaluator_profile=evaluator_profile)

    return open_session


def recording_path(name: str) -> Path:
    """A new file under RECORDINGS_DIR: two episodes started within the same second never share one."""
    path, number = RECORDINGS_DIR / f"{name}.h5", 2
    while path.exists():
        path, number = RECORDINGS_DIR / f"{name}-{number}.h5", number + 1
    return path


class LiveSession(QObject):
    sig_ready = Signal(str)              # world description, once the world and evaluator are up
    sig_error = Signal(str)              # an error to show the user
    sig_problem = Signal(str, str)       # the same error and its kind (status_messages.ErrorKind): how it was caught
    sig_status = Signal(str)             # something the user should know that is not an error
    sig_thinking = Signal(bool)          # the agent is being asked
    sig_observation = Signal(int, dict)  # step, the images the agent is given: current/previous/left/right
    sig_reset = Signal(float, float, int)  # the episode's reset is done: x, y after it, and its sample index
    sig_intervention = Signal(dict)      # an intervention's progress (a hint: queued, delivered, undelivered)
    sig_episode_started = Signal(dict)   # task id, budget, recording path, seed, granularity
    sig_episode_end = Signal(dict)       # the result

    def __init__(self, mode: str = "lockstep", backend: BackendProfile | None = None,
                 profile_path: Path | None = None, attach: str | None = None) -> None:
        """`profile_path`: read the game with this memory profile instead of the backend's own; `attach`:
        drive the game already running (BackendSession.attach_to) instead of launching one."""
        super().__init__()
        self.mode = mode
        self._use(backend or load_backend("builtin"))
        self.keeper = WorldKeeper(self.backend, self.sig_ready.emit, self.report,
                                  open_session=attach_opener(attach) if attach else BackendSession.open,
                                  evaluator_profile=profile_path)
        self.runner: EpisodeRunner | None = None
        self.paced: PacedGame | None = None
        self.pad_held: PadState | None = None  # written by whichever thread drives the game
        # (start, end, pad) of recent holds (time.monotonic): a lockstep hold is over in milliseconds,
        # too quick for a display timer to see in pad_held (the Memory tab plots pad input from this).
        self.pad_log: deque[tuple[float, float, PadState]] = deque(maxlen=256)
        self._thread: threading.Thread | None = None
        self._driver = ThreadPoolExecutor(max_workers=1, thread_name_prefix="studio-drive")
        self._drives: list[Future[None]] = []  # everything queued on the drive thread
        self._holds: list[Future[None]] = []   # of those, the human's driving (cancelled on key-up)
        self._samples_seen = 0

    def _use(self, backend: BackendProfile) -> None:
        self.backend = backend
        self.profile = load_profile(backend.memory_profile_path)
        self.actions = ActionSet.from_profile_data(self.profile.actions)
        self.tasks: list[Task] = backend_tasks(backend, self.profile.flags)

    @property
    def is_builtin(self) -> bool:
        return self.backend.kind == "builtin"

    # -- the game (WorldKeeper) -------------------------------------------------------------
    @property
    def world(self) -> GameConnection | None:
        """The game being driven (named `world` from the days when it was always the built-in one)."""
        return self.keeper.world

    @property
    def evaluator(self) -> EvaluatorClient | None:
        return self.keeper.evaluator

    @property
    def outline(self) -> Outline:
        return self.keeper.outline

    def connect_world(self) -> None:
        """Start the world and the evaluator, unless they are running or starting (returns at once)."""
        if self.keeper.start(self.mode):
            self._samples_seen = 0

    def restart_world(self, mode: str | None = None, backend: BackendProfile | None = None) -> None:
        """A fresh game and evaluator (after the game died, in another clock mode, or another game chosen
        in the Game menu). Returns at once: the episode is told to stop and the old processes are closed
        on the keeper's worker."""
        if mode is not None:
            self.mode = mode
        thread, drives = self._stop_everything()
        self._samples_seen = 0
        # Off the GUI thread and out of the new game's way: the old one closes once its episode has ended.
        self.keeper.restart(self.mode, lambda: self._wait_for(thread, drives, None), backend)

    def switch_backend(self, backend: BackendProfile) -> None:
        """Drive another game: the current one is ended (or, attached, left running), the backend's tasks
        loaded, the new game launched."""
        self._use(backend)
        self.keeper.open_session = BackendSession.open
        self.restart_world(backend=backend)

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

    def _stop_everything(self) -> tuple[threading.Thread | None, list[Future[None]]]:
        if self.busy and self.runner is not None:
            self.runner.stop()
            if self.paced is not None:
                self.paced.stop_pacing()
        for drive in self._drives:
            drive.cancel()
        return (self._thread if self.busy else None), list(self._drives)

    @staticmethod
    def _wait_for(thread: threading.Thread | None, drives: list[Future[None]], timeout: float | None) -> None:
        if thread is not None:
            thread.join(timeout)  # the runner stops after the step (or model call) in progress
        futures_wait(drives, timeout=timeout)  # a hold or a "Try it" must not share a closing pipe

    @property
    def busy(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def task(self, task_id: str) -> Task:
        return next(t for t in self.tasks if t.id == task_id)

    def add_task(self, task: Task) -> None:
        """A task authored in the studio joins the list, replacing one with the same id."""
        self.tasks = [t for t in self.tasks if t.id != task.id] + [task]

    # -- episodes ---------------------------------------------------------------------------
    def why_not_ready(self) -> str | None:
        """Why Start cannot run an episode now, in words for the status bar; None when it can."""
        if self.busy:
            return "An episode is already running: stop it first (Ctrl+.)."
        if self.keeper.failure:
            return f"Cannot start: {self.keeper.failure}. Restart world (Ctrl+Shift+R) tries again."
        if self.world is None or self.evaluator is None:
            return "The world is still starting: press Start once the status bar says Connected."
        state = self.evaluator.status.get("state")
        if state in ("failed", "disconnected"):
            return (f"Cannot start: the evaluator stopped ({self.evaluator.status.get('message') or state}); "
                    "ground truth is unavailable. Restart world (Ctrl+Shift+R) starts a fresh pair.")
        if any(not drive.done() for drive in self._drives):
            return "The world is still busy with a task try or your driving; start when it is done."
        return None

    def start_episode(self, choices: LiveChoices) -> None:
        problem = self.why_not_ready()
        if problem is not None:
            self.report(problem)
            return
        assert self.world is not None and self.evaluator is not None
        task = self.task(choices.task_id)
        seed = choices.seed if choices.seed is not None else random.SystemRandom().randrange(2**31)
        options = RunOptions(
            granularity=choices.granularity, paradigm=choices.paradigm,
            observation=ObservationOptions(previous_frame=choices.previous_frame, side_views=choices.side_views,
                                           side_view_mode=self.backend.side_views.default),
            interventions=InterventionPolicy(choices.intervention, k=choices.intervention_after),
            step_budget=choices.budget, frame_every_ticks=choices.frames_every_ticks, seed=seed,
            settle_s=self.backend.step_settle_s, motion=self.backend.continuous_motion)
        agent_options = {"granularity": choices.granularity, "model_id": choices.model_id,
                         "reflection_every": choices.reflection_every}
        try:
            agent = make_agent(choices.agent_spec, self.actions, seed, choices.paradigm, agent_options)
        except BatchError as exc:
            self.report(str(exc))
            return
        path = recording_path(f"{time.strftime('%Y%m%d-%H%M%S')}__{task.id}__{choices.granularity}__{agent.name}")
        # A lockstep world can be watched at a chosen pace; a real-time game runs at its own.
        # (Only the built-in world runs in lockstep: external games run in real time.)
        self.paced = PacedGame(cast(BuiltinWorld, self.world), choices.pace) if self.world.info.mode == "lockstep" \
            else None
        # PacedGame passes everything but hold() on to the world: it is one.
        game = cast(GameConnection, self.paced) if self.paced is not None else self.world
        runner = EpisodeRunner(game, self.evaluator, agent, self.actions, task, options, path)
        events = runner.events
        for signal, slot in ((events.sig_observation, self._on_observation), (events.sig_decision, self._on_decision),
                             (events.sig_pad, self._on_pad), (events.sig_reset, self._on_reset),
                             (events.sig_intervention, self.sig_intervention.emit)):
            signal.connect(slot)
        self.runner = runner
        self.sig_episode_started.emit({"task_id": task.id, "budget": choices.budget or task.step_budget,
                                       "recording": str(path), "seed": seed, "granularity": choices.granularity})
        log.info("episode started: %s, seed %d, recording %s", task.id, seed, path)
        self._thread = threading.Thread(target=self._run, args=(runner,), name="studio-episode", daemon=True)
        self._thread.start()

    def set_pace(self, rate: float | None) -> None:
        """Watch the running lockstep episode at another rate (None: as fast as it runs)."""
        if self.paced is not None and self.world is not None and self.world.info.mode == "lockstep":
            self.paced.rate = rate

    def _run(self, runner: EpisodeRunner) -> None:
        try:
            session = self.keeper.session
            if session is not None and not self.is_builtin:
                # An external game is restarted into the task's start state; the evaluator follows the new
                # process, and the runner must talk to that evaluator.
                session.prepare(runner.task.start_for_reset())
                assert session.evaluator is not None
                runner.evaluator = session.evaluator
                self._samples_seen = len(runner.evaluator.samples)
            result = runner.run().to_json()
        except Exception as exc:  # noqa: BLE001 - set-up failures or bugs: the window must hear of them
            # The runner turns step failures into results itself; what reaches here stopped it early.
            message = f"The episode could not run: {type(exc).__name__}: {exc}"
            kind = error_kind(exc)
            self.sig_thinking.emit(False)
            self.report(message, kind)
            self.sig_episode_end.emit({"error": message, "error_kind": kind, "end_reason": "error",
                                       "steps_used": runner.step, "recording": str(runner.record_path)})
            return
        self.sig_thinking.emit(False)
        kind = self._game_state_kind(runner.game) if result.get("error") else "error"
        if result.get("error"):
            self.report(result["error"], kind)
        log.info("episode ended: %s after %d steps", result.get("end_reason"), result.get("steps_used", 0))
        self.sig_episode_end.emit({**result, "error_kind": kind, "recording": str(runner.record_path)})

    def report(self, message: str, kind: str = "error") -> None:
        """An error for the window, with its kind (any thread: the signals are queued to the GUI)."""
        self.sig_error.emit(message)
        self.sig_problem.emit(message, kind)

    @staticmethod
    def _game_state_kind(game: Any) -> str:
        """Why an episode that ended with an error ended: ask the game itself whether it died (its client raises
        GameDiedError from then on), rather than reading the error's words."""
        try:
            game.latest_frame()
        except GameError as exc:
            return error_kind(exc)
        return "error"

    # -- runner callbacks (episode thread) ---------------------------------------------------
    def _on_observation(self, step: int, images: dict[str, Any]) -> None:
        self.sig_observation.emit(step, images)
        self.sig_thinking.emit(True)

    def _on_decision(self, step: int, decision: Decision) -> None:
        self.sig_thinking.emit(False)

    def _on_pad(self, pad: PadState | None) -> None:
        self.pad_held = pad

    def _on_reset(self, sample: StateSample, cursor: int) -> None:
        self.sig_reset.emit(sample.x, sample.y, cursor)

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

    def new_samples(self) -> list[StateSample]:
        evaluator = self.evaluator
        if evaluator is None:
            return []
        fresh, self._samples_seen, _dropped = evaluator.samples.since(self._samples_seen)
        return fresh

    def samples_from(self, cursor: int) -> None:
        """The next new_samples() starts at this sample index (the episode's reset)."""
        self._samples_seen = cursor

    def latest_sample(self) -> StateSample | None:
        evaluator = self.evaluator
        return evaluator.latest() if evaluator is not None else None

    def evaluator_state(self) -> dict[str, Any]:
        evaluator = self.evaluator
        return dict(evaluator.status) if evaluator is not None else {"state": "absent"}  # the keeper says why

    def state_text(self) -> str:
        """One or two words for the status bar: what the episode (or the world) is doing now."""
        runner = self.runner
        if self.busy and runner is not None:
            if runner.taken_over:
                return "You have control"
            if runner.paused:
                return f"Paused after step {runner.step}" if runner.waiting else "Pausing after this step…"
            return f"Running, step {runner.step}"
        return {"starting": "Starting the world…", "failed": "World not ready", "closed": "Closed"}.get(
            self.keeper.state, "Idle" if self.world is not None else "No world")

    # -- controls ---------------------------------------------------------------------------
    def pause(self) -> None:
        if self.runner and self.busy:
            self.runner.pause()

    def resume(self) -> None:
        if self.runner and self.busy:
            self.runner.resume()

    def step_once(self) -> None:
        if self.runner and self.busy:
            self.runner.step_once()

    def stop(self) -> None:
        if self.runner and self.busy:
            self.runner.stop()
            if self.paced is not None:
                self.paced.stop_pacing()

    def take_over(self) -> None:
        # Also before its thread has started: Start emits sig_episode_started first, and a human who took
        # control before Start keeps it from the first step.
        if self.runner is not None:
            self.runner.take_over()

    def hand_back(self) -> None:
        if self.runner and self.busy:
            self.runner.hand_back()  # paused before the takeover: stays paused

    @property
    def taken_over(self) -> bool:
        return bool(self.runner and self.busy and self.runner.taken_over)

    @property
    def can_drive(self) -> bool:
        """Keys drive the character: between episodes, or during one after Take control."""
        return self.taken_over or (not self.busy and self.world is not None)

    def human_input(self, pad: PadState, seconds: float) -> None:
        """Drive the character: a recorded `human` step during a taken-over episode, or a plain
        hold between episodes (to look around or author a task)."""
        if self.taken_over:
            assert self.runner is not None
            self.runner.human_input(pad, seconds)
        elif not self.busy and self.world is not None:
            self._drives = [d for d in self._drives if not d.done()]
            self._holds = [d for d in self._holds if not d.done()]
            hold = self._driver.submit(self._hold, self.world, pad, seconds)
            self._drives.append(hold)
            self._holds.append(hold)

    def cancel_human_inputs(self) -> None:
        """The key or stick was let go: drop the driving queued but not started."""
        if self.taken_over:
            assert self.runner is not None
            self.runner.cancel_human_inputs()
        for hold in self._holds:
            hold.cancel()  # only those not started yet; the one in progress ends on its own

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
        session = self.keeper.session
        if session is None:
            raise GameError("the game is not running")
        pid = session.restart()
        assert session.evaluator is not None
        self._samples_seen = len(session.evaluator.samples)  # the new evaluator's samples start afresh
        return pid

    @property
    def human_inputs_waiting(self) -> int:
        if self.taken_over:
            assert self.runner is not None
            return self.runner.human_inputs_waiting
        return sum(1 for d in self._holds if not d.running() and not d.done())

    def _hold(self, world: GameConnection, pad: PadState, seconds: float) -> None:
        self.pad_held = pad
        started = time.monotonic()
        try:
            world.hold(pad, seconds)
        except GameError as exc:
            self.report(str(exc), error_kind(exc))
        finally:
            self.pad_held = None
            self.pad_log.append((started, time.monotonic(), pad))

    def intervene(self, kind: Kind, text: str = "") -> None:
        if self.runner and self.busy:
            self.runner.request_intervention(kind, text)
            return
        what = "hint" if kind == "text" else kind.replace("_", " ")
        self.sig_status.emit(f"No episode is running: the {what} was not sent.")

    def close(self) -> None:
        """Stop the episode and close the world and evaluator (waits, bounded: the application is exiting)."""
        thread, drives = self._stop_everything()
        self.keeper.close(lambda: self._wait_for(thread, drives, CLOSE_WAIT_S))
        self._driver.shutdown(wait=True, cancel_futures=True)
