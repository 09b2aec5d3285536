"""LiveSession: the episode played on the live game: its runner, the controls a person has over it (pause,
step, stop, take control, interventions) and the signals the Live view listens to.

The game itself belongs to the GameHost (studio/game_host.py): the episode runs as one drive on its drive
thread, so nothing else drives the game meanwhile. Runner events arrive on that thread and are re-emitted as
Qt signals, which Qt queues to slots of objects living in the GUI thread. Frames, samples and the pad being
held are not signalled at all: the window pulls the newest of each from the host on timers (latest-wins).
"""

from __future__ import annotations

import logging
import random
import time
from concurrent.futures import Future
from concurrent.futures import wait as futures_wait
from pathlib import Path
from typing import Any, cast

from PySide6.QtCore import QObject, Signal

from core.agents.base import Decision
from core.agents.observe import ObservationOptions
from core.backends.profile import BackendProfile
from core.episode.records import EpisodeResult
from core.evaluation.sample import StateSample
from core.game.connection import GameConnection
from core.game.errors import GameError
from core.game.pad import PadState
from core.paths import RECORDINGS_DIR
from core.session.batch import BatchError, check_sound, make_agent
from core.session.interventions import InterventionPolicy, Kind
from core.session.runner import EpisodeRunner, RunOptions
from studio.episode_messages import EpisodeEnd, EpisodeStart
from studio.game_host import GameHost
from studio.live_controls import LiveChoices
from studio.observed_game import ObservedGame
from studio.status_messages import error_kind
from studio.unexpected import unexpected
from studio.world_keeper import describe

log = logging.getLogger("studio.live")
CLOSE_WAIT_S = 30.0  # how long closing the studio waits for the episode's step in progress


def recording_path(name: str) -> Path:
    """A new file under RECORDINGS_DIR: two episodes started within the same second never share one."""
    path, number = RECORDINGS_DIR / f"{name}.h5", 2
    while path.exists():
        path, number = RECORDINGS_DIR / f"{name}-{number}.h5", number + 1
    return path


class LiveSession(QObject):
    sig_error = Signal(str)              # an episode's error to show the user
    sig_problem = Signal(str, str)       # the same error and its kind (status_messages.ErrorKind): how it was caught
    sig_status = Signal(str)             # something the user should know that is not an error
    sig_thinking = Signal(bool)          # the agent is being asked
    sig_observation = Signal(int, dict)  # step, the images the agent is given: current/previous/left/right
    sig_reset = Signal(float, float, int)  # the episode's reset is done: x, y after it, and its sample index
    sig_intervention = Signal(object)    # InterventionProgress (a hint: queued, delivered, undelivered)
    sig_episode_started = Signal(object)  # EpisodeStart: task, budget, recording, seed, granularity
    sig_episode_end = Signal(object)     # EpisodeEnd: the result, the recording, how an error was caught

    def __init__(self, host: GameHost | None = None) -> None:
        super().__init__()
        self.host = host or GameHost()
        self.runner: EpisodeRunner | None = None
        self._episode: Future[None] | None = None

    # -- episodes ---------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        """An episode is running (or queued to run on the drive thread)."""
        return self._episode is not None and not self._episode.done()

    def why_not_ready(self) -> str | None:
        """Why Start cannot run an episode now, in words for the status bar; None when it can."""
        host = self.host
        if self.busy:
            return "An episode is already running: stop it first (Ctrl+.)."
        if host.keeper.failure:
            return f"Cannot start: {host.keeper.failure}. Restart world (Ctrl+Shift+R) tries again."
        if host.world is None or host.evaluator is None:
            return "The world is still starting: press Start once the status bar says Connected."
        state = host.evaluator.status.get("state")
        if state in ("failed", "disconnected"):
            return (f"Cannot start: the evaluator stopped ({host.evaluator.status.get('message') or state}); "
                    "ground truth is unavailable. Restart world (Ctrl+Shift+R) starts a fresh pair.")
        if host.driving:
            return "The world is still busy with a task try or your driving; start when it is done."
        return None

    def start_episode(self, choices: LiveChoices) -> None:
        problem = self.why_not_ready()
        if problem is not None:
            self.report(problem)
            return
        host = self.host
        assert host.world is not None and host.evaluator is not None
        task = host.task(choices.task_id)
        seed = choices.seed if choices.seed is not None else random.SystemRandom().randrange(2**31)
        options = RunOptions(
            granularity=choices.granularity, paradigm=choices.paradigm,
            observation=ObservationOptions(previous_frame=choices.previous_frame, side_views=choices.side_views,
                                           side_view_mode=host.backend.side_views.default, audio=choices.audio),
            interventions=InterventionPolicy(choices.intervention, k=choices.intervention_after),
            step_budget=choices.budget, frame_every_ticks=choices.frames_every_ticks, seed=seed,
            settle_s=host.backend.step_settle_s, motion=host.backend.continuous_motion,
            position_units=host.position_units)
        agent_options = {"granularity": choices.granularity, "model_id": choices.model_id,
                         "reflection_every": choices.reflection_every}
        try:
            agent = make_agent(choices.agent_spec, host.actions, seed, choices.paradigm, agent_options)
            check_sound(choices.audio, agent, host.backend)
        except BatchError as exc:
            self.report(str(exc))
            return
        path = recording_path(f"{time.strftime('%Y%m%d-%H%M%S')}__{task.id}__{choices.granularity}__{agent.name}")
        # A lockstep world can be watched at a chosen pace; a real-time game runs at its own.
        host.set_pace(choices.pace if host.world.info.mode == "lockstep" else None)
        game = ObservedGame(host.world, host.monitor)
        # ObservedGame passes everything but its holds on to the game: it is the game, observed.
        runner = EpisodeRunner(cast(GameConnection, game), host.evaluator, agent, host.actions, task, options, path)
        events = runner.events
        for signal, slot in ((events.sig_observation, self._on_observation), (events.sig_decision, self._on_decision),
                             (events.sig_reset, self._on_reset), (events.sig_intervention, self.sig_intervention.emit)):
            signal.connect(slot)
        self.runner = runner
        self.sig_episode_started.emit(EpisodeStart(task.id, choices.budget or task.step_budget, path, seed,
                                                   choices.granularity))
        log.info("episode started: %s, seed %d, recording %s", task.id, seed, path)
        self._episode = host.drive(lambda _game, _evaluator: self._run(runner), kind="episode")

    def set_pace(self, rate: float | None) -> None:
        """Watch the running lockstep episode at another rate (None: as fast as it runs)."""
        world = self.host.world
        if world is not None and world.info.mode == "lockstep":
            self.host.set_pace(rate)

    def _run(self, runner: EpisodeRunner) -> None:
        try:
            start = runner.task.start_for_reset()  # a task's always names one (only free play may have none)
            if not self.host.is_builtin and start is not None:
                # An external game is restarted into the task's start state; the evaluator follows the new
                # process, and the runner must talk to that evaluator.
                runner.evaluator = self.host.prepare_episode(start)
            result = runner.run()
        except Exception as exc:  # noqa: BLE001 - set-up failures or bugs: the window must hear of them
            # The runner turns step failures into results itself; what reaches here stopped it early.
            cause = describe(exc) if isinstance(exc, GameError) else unexpected("the episode", exc)
            message = f"The episode could not run: {cause}"
            kind = error_kind(exc)
            self.sig_thinking.emit(False)
            self.report(message, kind)
            failed = EpisodeResult(runner.task.id, False, runner.step, "error", error=message)
            self.sig_episode_end.emit(EpisodeEnd(failed, Path(runner.record_path or ""), kind))
            return
        self.sig_thinking.emit(False)
        kind = self._game_state_kind(runner.game) if result.error else "error"
        if result.error:
            self.report(result.error, kind)
        log.info("episode ended: %s after %d steps", result.end_reason, result.steps_used)
        self.sig_episode_end.emit(EpisodeEnd(result, Path(runner.record_path or ""), kind))

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

    # -- runner callbacks (drive thread) -----------------------------------------------------
    def _on_observation(self, step: int, images: dict[str, Any]) -> None:
        self.sig_observation.emit(step, images)
        self.sig_thinking.emit(True)

    def _on_decision(self, step: int, decision: Decision) -> None:
        self.sig_thinking.emit(False)

    def _on_reset(self, sample: StateSample, cursor: int) -> None:
        log.info("episode reset done: the first step comes next")
        self.sig_reset.emit(sample.x, sample.y, cursor)

    # -- pulled by the window's timers (GUI thread) --------------------------------------------
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
            self.host.keeper.state, "Idle" if self.host.world is not None else "No world")

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
            self.host.monitor.unpaced.set()  # the hold in progress finishes at full speed

    def take_over(self) -> None:
        # Also before its drive has started: Start emits sig_episode_started first, and a human who took
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
        return self.taken_over or (not self.busy and self.host.world is not None)

    def human_input(self, pad: PadState, seconds: float) -> None:
        """Drive the character: a recorded `human` step during a taken-over episode, or a plain
        hold between episodes (to look around or author a task)."""
        if self.taken_over:
            assert self.runner is not None
            self.runner.human_input(pad, seconds)
        elif not self.busy and self.host.world is not None:
            self.host.hold(pad, seconds)

    def cancel_human_inputs(self) -> None:
        """The key or stick was let go: drop the driving queued but not started."""
        if self.taken_over:
            assert self.runner is not None
            self.runner.cancel_human_inputs()
        self.host.cancel_holds()

    @property
    def human_inputs_waiting(self) -> int:
        if self.taken_over:
            assert self.runner is not None
            return self.runner.human_inputs_waiting
        return self.host.holds_waiting

    def intervene(self, kind: Kind, text: str = "") -> None:
        if self.runner and self.busy:
            self.runner.request_intervention(kind, text)
            return
        what = "hint" if kind == "text" else kind.replace("_", " ")
        self.sig_status.emit(f"No episode is running: the {what} was not sent.")

    # -- the game under the episode --------------------------------------------------------------
    def restart_world(self, mode: str | None = None, backend: BackendProfile | None = None) -> None:
        """A fresh game and evaluator (after the game died, in another clock mode, or another game chosen
        in the Game menu). Returns at once: the episode is told to stop, and the old processes close on the
        host's keeper once it has ended."""
        episode = self._stop_episode()
        self.host.restart(mode, backend, before_close=lambda: futures_wait([episode]) if episode else None)

    def close(self) -> None:
        """Stop the episode and close the game and evaluator (waits, bounded: the application is exiting)."""
        episode = self._stop_episode()
        self.host.close(lambda: futures_wait([episode], timeout=CLOSE_WAIT_S) if episode else None, CLOSE_WAIT_S)

    def _stop_episode(self) -> Future[None] | None:
        if not self.busy:
            return None
        self.stop()
        return self._episode
