"""EpisodeRunner: one episode, Qt-free and event-driven.

Loop: observe -> decide -> execute -> (settle) -> read evaluator samples -> metrics -> record.
Ends on success, budget exhausted, stop, or error (the game died, the agent failed for good);
the episode file is finished in every case. Free play (core/session/free_play.py) runs the same loop with no
evaluator: no sample is read, steps have no positions, and the result is `unjudged`. Controls (pause,
resume, single step, stop, human takeover, interventions) may be called from any thread, for example the
studio's GUI thread.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import sys
import threading
import time
from pathlib import Path
from typing import Any, Literal

from core.agents.actions import ActionSet
from core.agents.base import Agent, Decision
from core.agents.observation import HistoryEntry, Observation
from core.agents.observe import ObservationBuilder, resize_for_model
from core.audio.clip import AudioClip, AudioLayout
from core.episode.metrics import (
    AGENT_SOURCES,
    IM_EPSILON_M,
    INVALID_ACTION,
    GoalArea,
    StepFacts,
    continuous_facts,
    episode_metrics,
    next_run_length,
    unjudged_metrics,
)
from core.episode.model import Episode
from core.episode.records import (
    EpisodeResult,
    InterventionRecord,
    Position,
    StepDecision,
    StepRecord,
    trajectory_digest,
)
from core.evaluation.client import EvaluatorClient, EvaluatorError
from core.evaluation.sample import StateSample
from core.evaluation.stepping import StepProtocol, current_tick
from core.evaluation.tasks import Task
from core.game.connection import GameConnection, StepResult
from core.game.errors import GameError
from core.game.pad import PadState
from core.session.episode_file import episode_metadata, image_sets, open_recorder, step_sound
from core.session.events import RunnerEvents
from core.session.free_play import UNJUDGED, UNJUDGED_WHY, FreePlay
from core.session.interventions import (
    DEFAULT_HINT,
    PHYSICAL,
    Intervention,
    InterventionProgress,
    Kind,
)
from core.session.run_options import RunOptions
from core.step_sources import JUDGED_SOURCES, Source

log = logging.getLogger(__name__)
# What the controls queue for the loop: a human input (pad, seconds), or an intervention.
_Command = tuple[Literal["human"], tuple[PadState, float]] | tuple[Literal["intervention"], Intervention]


class AgentFailure(RuntimeError):
    """The agent could not decide (for example, a model API that failed for good)."""


NO_RESULT = ("error", "task_error")  # end reasons that make no result (run_folder.is_error)


class TaskAlreadyMet(RuntimeError):
    """The task's success condition holds before any step: a broken task, not a result."""


class EpisodeRunner:
    def __init__(self, game: GameConnection, evaluator: EvaluatorClient | None, agent: Agent, actions: ActionSet,
                 task: Task | FreePlay, options: RunOptions, record_path: Path | None) -> None:
        """`evaluator` None: free play (`task` a FreePlay), which nothing judges; a Task always needs one."""
        if isinstance(task, Task) and evaluator is None:
            raise ValueError(f"the task {task.id} needs an evaluator to judge it; only free play runs without one")
        self.game, self.agent, self.actions = game, agent, actions
        # Free play never reads ground truth, even where an evaluator happens to run beside the game.
        self.evaluator = evaluator if isinstance(task, Task) else None
        self.task, self.options, self.record_path = task, options, record_path
        self.events = RunnerEvents()
        self._paused = False
        self._wake = threading.Event()  # set by every control call; the loop re-reads its state after waking
        self._single_step = False
        self.waiting = False  # blocked until a control call: paused, or taken over and idle
        self._stop = threading.Event()
        self._decided = threading.Event()  # the decision in progress is made, or stop() abandons it
        self._stop_reason = "stopped"
        self._stop_error: str | None = None
        self._control = threading.Lock()
        self._pending: list[_Command] = []  # human inputs and interventions, in arrival order
        self._text_intervention: Intervention | None = None
        self._unheard_hints: list[Intervention] = []  # hints in the agent's history that no prompt has carried yet
        self.taken_over = False
        self._paused_before_takeover = False
        self.step = 0
        self.budget = options.step_budget or task.step_budget
        self._images: dict[str, Any] = {}
        # The sound of the last step, which the agent hears at its next decision (`--audio`, or a listening agent)
        self._last_sound: AudioClip | None = None
        self._hears = self.options.observation.audio != "none" or bool(getattr(agent, "needs_audio", False))
        self._side_view_s = 0.0  # game time the current step's side views cost (turning the camera)
        goal = task.goal_point()
        self._goal = GoalArea(goal[0], goal[1], goal[2]) if goal is not None else None
        # What the episode holds so far: views subscribe to it; the recorder writes it (core/episode).
        self.episode = Episode(episode_metadata(task, options, agent, game, self._goal, self.judged), record_path,
                               image_sets(options.observation))
        sound = game.info.audio if self.episode.audio_state == "on" else None
        self.episode.audio_format = AudioLayout(sound.rate, sound.channels) if sound is not None else None

    @property
    def progress(self) -> float:
        """The share of the step budget played so far (a batch run's ETA)."""
        return min(1.0, self.step / self.budget) if self.budget else 0.0

    # -- controls (any thread) --------------------------------------------------------------
    def pause(self) -> None:
        self._paused = True

    @property
    def paused(self) -> bool:
        return self._paused

    def resume(self) -> None:
        self.taken_over = False
        self._single_step = False
        self._paused = False
        self._wake.set()

    def step_once(self) -> None:
        self._single_step = True
        self._wake.set()

    def stop(self, reason: str = "stopped", error: str | None = None) -> None:
        """End the episode after the step in progress; a decision still being made is abandoned, so a
        slow model call never holds up a stop. `reason` becomes the end_reason: "stopped" (a user's
        Stop), "interrupted" (a batch cut short by Ctrl+C, which is not a result) or "error" with `error`
        saying why (an episode past its time limit)."""
        self._stop_reason = reason
        self._stop_error = error
        self._stop.set()
        self._wake.set()
        self._decided.set()

    def take_over(self) -> None:
        if not self.taken_over:
            self._paused_before_takeover = self._paused
        self.taken_over = True
        self.pause()

    def hand_back(self) -> None:
        """End a takeover: the agent goes on, unless it was paused before the human took the controls (then
        it stays paused, as the user left it; handing back had resumed it)."""
        if not self._paused_before_takeover:
            self.resume()
            return
        self.taken_over = False
        self._wake.set()  # the loop sees the takeover over and waits, paused

    def human_input(self, pad: PadState, seconds: float) -> None:
        """While taken over: execute this pad input as a recorded step with source `human`."""
        with self._control:
            self._pending.append(("human", (pad, seconds)))
        self._wake.set()

    def cancel_human_inputs(self) -> int:
        """Drop the human inputs not started yet (the key was let go); returns how many."""
        with self._control:
            kept: list[_Command] = [command for command in self._pending if command[0] != "human"]
            dropped, self._pending = len(self._pending) - len(kept), kept
        return dropped

    @property
    def human_inputs_waiting(self) -> int:
        """Human inputs queued but not started; a gamepad sends the next one only when this is 0."""
        with self._control:
            return sum(1 for kind, _ in self._pending if kind == "human")

    def request_intervention(self, kind: Kind, text: str = "") -> None:
        """Carried out before the agent's next step, as a recorded step of its own (a text hint: in the
        agent's next prompt). A paused runner runs it and stays paused. sig_intervention reports a hint as
        "queued", "delivered" once a prompt carried it, or "undelivered" if the episode ended first."""
        params = {"hint": text or DEFAULT_HINT} if kind == "text" else {}
        with self._control:
            self._pending.append(("intervention", Intervention(self.step, "human", kind, params)))
        self._wake.set()

    # -- the episode ------------------------------------------------------------------------
    @property
    def judged(self) -> bool:
        """Whether an evaluator judges this episode (False: free play, recorded `unjudged`)."""
        return self.evaluator is not None

    def run(self) -> EpisodeResult:
        """Play the episode into `self.episode` (and its file); returns how it ended. Those who write it
        (results.jsonl, the studio) turn it into JSON with `to_json()`."""
        task, options, episode = self.task, self.options, self.episode
        budget = options.step_budget or task.step_budget
        instruction = task.instruction(options.granularity)
        start = task.start_for_reset()
        if start is not None:  # None: free play on a game with no start states, as it launched
            self.game.reset(start)
        protocol = StepProtocol(self.game, self.evaluator, options.settle_s) if self.evaluator is not None else None
        builder = ObservationBuilder(self.game, options.observation)
        position: StateSample | None = None
        if protocol is not None and isinstance(task, Task):
            position = protocol.start(task.success.model_dump(exclude_none=True))
        recorder = open_recorder(self.episode, self.game, options, self.record_path) \
            if self.record_path is not None else None
        history: list[HistoryEntry] = []
        last_intervention: int | None = None
        pending_hint = ""
        end_reason, error = "budget", None
        goal = self._goal
        reached_goal = False
        succeeded = False
        sample_cursor = len(self.evaluator.samples) if self.evaluator is not None else 0
        if position is not None:
            # Where the episode starts, even when no later sample repeats it before step 1.
            episode.append_samples([position])
            self.events.sig_reset.emit(position, sample_cursor)
        try:
            if protocol is not None and position is not None and protocol.judge(position, 0, "privileged"):
                raise TaskAlreadyMet(f"the task {task.id}'s success condition already holds at its start state; "
                                     "the task is broken (`python main.py tasks validate` refuses it)")
            while self.step < budget:
                source, decision, macro, intervention = self._next_action(builder, instruction, history,
                                                                          pending_hint)
                if source is None:
                    end_reason, error = self._stop_reason, self._stop_error
                    break
                pending_hint = ""
                self.step += 1
                tick_before = current_tick(self.game)
                # pushing a stick in a dialogue box moves nothing
                dialogue_open = position.dialogue_active if position is not None else False
                answer = self._execute(macro)
                after = protocol.end(answer) if protocol is not None else None
                before_xy = (position.x, position.y) if position is not None else None
                # NaN where nothing reads positions: unknown, which no IM rule counts as ineffective or effective
                displacement = (math.hypot(after.x - position.x, after.y - position.y)
                                if after is not None and position is not None else math.nan)
                position = after
                # Judged on the step's own end, before any push: only an acting step can meet the condition.
                succeeded = (protocol is not None and after is not None and source in JUDGED_SOURCES
                             and protocol.judge(after, self.step, source))
                label, movement = self._metric_label(decision, source, intervention)
                threshold = self._im_threshold(decision)
                fact = StepFacts(label, movement, displacement, "", source, step=self.step, epsilon=threshold,
                                 dialogue=dialogue_open)
                if goal is not None and after is not None and source in AGENT_SOURCES \
                        and goal.contains((after.x, after.y)):
                    reached_goal = True  # by the agent's own move: a human's steps or a push are not its execution
                pushed_by = 0.0
                if intervention is None and self._text_intervention is not None and decision is not None:
                    # A hint is recorded with the agent step whose prompt carried it (never a human's step).
                    intervention, self._text_intervention = self._text_intervention, None
                elif intervention is None and not succeeded and self.step < budget:
                    # Never after the budget's last step: a push then could only change the category, not the agent.
                    intervention = options.interventions.check(
                        self.step, next_run_length(episode.consecutive_im, fact), last_intervention)
                    if intervention is not None:
                        pending_hint, push = self._apply(intervention)
                        if push is not None and protocol is not None and after is not None:
                            # Measured apart, so the push is never credited to the agent's next move.
                            pushed = protocol.end(push, settle=False)
                            pushed_by = math.hypot(pushed.x - after.x, pushed.y - after.y)
                            position = pushed
                if intervention is not None:
                    intervention = dataclasses.replace(intervention, step=self.step)  # the step that carries it
                    last_intervention = self.step
                    self.events.sig_intervention.emit(InterventionProgress(intervention, "recorded"))
                new_samples: list[StateSample] = []
                lost = 0
                if self.evaluator is not None:
                    new_samples, sample_cursor, lost = self.evaluator.samples.since(sample_cursor)
                if lost:  # only after a pause longer than the log keeps: say so in the record
                    log.warning("%d evaluator samples before step %d were no longer kept", lost, self.step)
                tick_after = after.tick if after is not None else (
                    answer.tick if answer is not None else current_tick(self.game))
                after_xy = (after.x, after.y) if after is not None else None
                record = self._step_record(decision, source, macro, intervention, label, movement, tick_before,
                                           tick_after, (before_xy, after_xy), displacement, pushed_by, threshold,
                                           dialogue_open)
                # read at once: the game keeps only its last few seconds
                sound = step_sound(self.episode, self.game, tick_before, self.step)
                self._last_sound = sound[0] if sound is not None else None
                episode.append_samples(new_samples)
                if succeeded:
                    episode.set_success_step(self.step)
                index = episode.append_step(record, self._images)
                if sound is not None:
                    episode.append_audio(index, *sound)
                history.append(HistoryEntry(self.step, record.action, decision.thought if decision else "",
                                            decision.self_assessment if decision else "", pending_hint))
                if succeeded:
                    end_reason = "success"
                    break
            else:
                end_reason = "budget"
        except TaskAlreadyMet as exc:
            end_reason, error = "task_error", str(exc)  # a broken task: not a result, and retrying cannot help
        except GameError as exc:
            end_reason, error = "error", self.root_cause(exc)
            if self._stop_error:  # the game was killed because the episode had to end (its time limit)
                error = f"{self._stop_error}; {error}"
        except AgentFailure as exc:
            end_reason, error = "error", str(exc)
        except Exception as exc:  # noqa: BLE001 - e.g. a full disk: end with the reason and a closed, readable file
            end_reason, error = "error", f"unexpected {type(exc).__name__}: {exc}"
        finally:
            if sys.exc_info()[0] is not None and recorder is not None:  # KeyboardInterrupt and the like
                with contextlib.suppress(Exception):
                    recorder.close(None)  # what was appended is written; the file says "cut short"
        episode.reached_goal_area = reached_goal
        result = self._result(end_reason, error, reached_goal, self._report_unheard())
        if recorder is not None:
            try:
                recorder.close(result)
            except OSError as exc:  # the steps already written stay readable; only the result is missing
                result = result.with_error(f"(the result could not be written: {exc})")
        episode.set_result(result)
        return result

    # -- pieces -----------------------------------------------------------------------------
    def root_cause(self, exc: GameError) -> str:
        """When the game dies, the evaluator follows it; report the game's death, not the echo."""
        deadline = time.monotonic() + (2.0 if isinstance(exc, EvaluatorError) else 0.0)
        while True:  # the evaluator may notice the death a moment before the game client does
            try:
                self.game.latest_frame()
            except GameError as game_error:
                return f"the game failed: {game_error}"
            if time.monotonic() >= deadline:
                break
            time.sleep(0.05)
        what = "the evaluator failed" if isinstance(exc, EvaluatorError) else "the game failed"
        return f"{what}: {exc}"

    def _next_action(self, builder: ObservationBuilder, instruction: str, history: list[HistoryEntry],
                     hint: str) -> tuple[Source | None, Decision | None, tuple[tuple[PadState, float], ...],
                                         Intervention | None]:
        while True:
            if self._stop.is_set():
                return None, None, (), None
            with self._control:
                command = self._pending.pop(0) if self._pending else None
            if command is not None:
                if command[0] == "human":
                    pad, seconds = command[1]
                    self._side_view_s = 0.0
                    self._images = {"current": builder.build(self.step + 1, instruction, history).frame}
                    return "human", None, ((pad, seconds),), None
                intervention = command[1]
                if intervention.kind == "text":
                    # Shown to the agent in its next prompt; recorded with the next step.
                    history.append(HistoryEntry(self.step, "Hint", "", "", intervention.params["hint"]))
                    self._text_intervention = intervention
                    self._unheard_hints.append(intervention)
                    self.events.sig_intervention.emit(InterventionProgress(intervention, "queued", self.step + 1))
                    continue
                self._images = {"current": None}
                self._side_view_s = 0.0
                return "intervention", None, PHYSICAL.get(intervention.kind, ()), intervention
            if (self._paused and not self._single_step) or self.taken_over:
                self.waiting = True
                self._wake.wait()
                self._wake.clear()  # everything is checked again before the next wait: no wake-up is lost
                self.waiting = False
                continue
            if self._single_step:
                self._single_step = False
                self._paused = True  # one agent step, then paused again
            entries = history + ([HistoryEntry(self.step, "Hint", "", "", hint)] if hint else [])
            observation = builder.build(self.step + 1, instruction, entries,
                                        self._last_sound if self._hears else None)
            self._side_view_s = builder.side_view_seconds
            self._images = {"current": observation.frame, "previous": observation.previous_frame,
                            "left": observation.left_view, "right": observation.right_view}
            if observation.hearing is not None:  # the spectrogram the model is shown, recorded as it is sent
                self._images["hearing"] = observation.hearing
            self.events.sig_observation.emit(self.step + 1, dict(self._images))
            try:
                decision = self._decide(observation)
            except Exception as exc:
                raise AgentFailure(f"the agent failed at step {self.step + 1}: {type(exc).__name__}: {exc}") from exc
            if decision is None:  # stopped while the agent was deciding
                return None, None, (), None
            self.events.sig_decision.emit(self.step + 1, decision)
            for carried in self._unheard_hints:  # this prompt carried them
                self.events.sig_intervention.emit(InterventionProgress(carried, "delivered", self.step + 1))
            self._unheard_hints = []
            macro = decision.action.macro if decision.action is not None else ()
            return ("privileged" if self.options.privileged else "agent"), decision, macro, None

    def _decide(self, observation: Observation) -> Decision | None:
        """The agent's decision, or None if stop() comes first. The call runs on its own daemon thread,
        which is left to finish (and be discarded) when the episode stops under it."""
        outcome: list[Decision | BaseException] = []
        # One event per decision, woken by the decision or by stop(): no polling (at 64 episodes in flight, a
        # 50 ms poll each was 1,280 wake-ups a second of threads taking the GIL to find nothing to do).
        done = self._decided = threading.Event()
        if self._stop.is_set():  # stop() came before this decision's event was in place
            return None

        def decide() -> None:
            try:
                outcome.append(self.agent.decide(observation))
            except BaseException as exc:  # noqa: BLE001 - handed to the runner's thread, which reports it
                outcome.append(exc)
            finally:
                done.set()

        threading.Thread(target=decide, name=f"agent-decide-{self.step + 1}", daemon=True).start()
        done.wait()
        if not outcome:  # stop() woke us first
            return None
        if isinstance(outcome[0], BaseException):
            raise outcome[0]
        return outcome[0]

    def _execute(self, macro: tuple[tuple[PadState, float], ...]) -> StepResult | None:
        """Hold the step's input; returns the game's answer to the last of it (None: nothing was held)."""
        return self._hold_macro(macro)

    def _hold_macro(self, macro: tuple[tuple[PadState, float], ...]) -> StepResult | None:
        every = self.options.frame_every_ticks
        answer = None
        if self.record_path is None or every <= 0:
            for pad, seconds in macro:
                answer = self.game.hold(pad, seconds)
            return answer
        hz = self.game.info.tick_hz
        for pad, seconds in macro:
            ticks = max(1, round(seconds * hz))
            while ticks > 0:  # holding the same pad in pieces gives the same simulation, plus frames
                piece = min(every, ticks)
                answer = self.game.hold(pad, piece / hz)
                ticks -= piece
                frame = self.game.latest_frame()
                self.episode.append_frame(frame.tick, resize_for_model(frame.pixels,
                                                                       self.options.observation.max_width))
        return answer

    def _report_unheard(self) -> list[dict[str, Any]]:
        """Interventions the episode ended before carrying out (a hint no prompt carried, a push-back still
        queued): reported as "undelivered", never dropped silently."""
        with self._control:
            queued = [command[1] for command in self._pending if command[0] == "intervention"]
            self._pending = []
        unheard = [InterventionProgress(i, "undelivered") for i in [*self._unheard_hints, *queued]]
        self._unheard_hints = []
        for item in unheard:
            self.events.sig_intervention.emit(item)
        return [item.to_json() for item in unheard]

    def _apply(self, intervention: Intervention) -> tuple[str, StepResult | None]:
        """Carry out an automatic intervention: (the hint for the next prompt, the game's answer to a push)."""
        if intervention.kind == "text":
            return str(intervention.params.get("hint", DEFAULT_HINT)), None
        answer = None
        for pad, seconds in PHYSICAL[intervention.kind]:
            answer = self.game.hold(pad, seconds)
        return "", answer

    def _metric_label(self, decision: Decision | None, source: str,
                      intervention: Intervention | None) -> tuple[str, bool]:
        """(entropy label, asked to move) of a step, as the metrics count it (docs/metrics.md)."""
        if decision is None:
            return (intervention.kind if intervention is not None else source), False
        if decision.action is None:
            return INVALID_ACTION, False
        if decision.action.name == "Continuous":
            return continuous_facts(decision.action.params, self.actions.spec.continuous.dead_zone)
        return decision.action.name, decision.action.name in self.actions.movement

    def _im_threshold(self, decision: Decision | None) -> float:
        """Metres below which this step's move is ineffective: ε for discrete moves; for continuous control a
        share of what the same stick and duration move the character on open ground (the backend's calibration)."""
        motion = self.options.motion
        if motion is None or decision is None or decision.action is None or decision.action.name != "Continuous":
            return IM_EPSILON_M
        params = decision.action.params
        left_x, left_y = (float(v) for v in params.get("left_stick") or (0.0, 0.0))
        running = "B" in (params.get("buttons") or ())
        return motion.threshold_m(left_x, left_y, float(params.get("duration", 0.0)), running)

    def _step_record(self, decision: Decision | None, source: Source, macro: tuple[tuple[PadState, float], ...],
                     intervention: Intervention | None, label: str, movement: bool, tick_before: int,
                     tick_after: int, where: tuple[Position | None, Position | None], displacement: float,
                     pushed_by: float, threshold: float, dialogue_open: bool) -> StepRecord:
        action = decision.action.describe() if decision and decision.action else (
            "NoOp" if decision else (intervention.kind if intervention else "HumanInput"))
        reply = None
        if decision is not None:
            reply = StepDecision(
                action=action, action_params=decision.action.params if decision.action else {},
                thought=decision.thought, self_assessment=decision.self_assessment or "missing",
                raw_reply=decision.raw_reply, parse_error=decision.parse_error, usage=dict(decision.usage),
                latency_s=decision.latency_s, memory=decision.memory, reflection=decision.reflection,
                lessons=tuple(decision.lessons))
        return StepRecord(
            step=self.step, source=source, tick_before=tick_before, tick_after=tick_after,
            time=time.time(), action=action, decision=reply,
            intervention=InterventionRecord.from_json(intervention.to_json()) if intervention else None,
            position_before=where[0], position_after=where[1], displacement=displacement,
            intervention_displacement=pushed_by, movement=movement, entropy_label=label,
            macro=tuple((pad.to_dict(), seconds) for pad, seconds in macro),
            # Side views made by turning the camera cost game time before the action; instant ones cost none.
            # (Only agent steps get views: never human steps or interventions.)
            side_views=({"mode": self.options.observation.side_view_mode,
                         "game_seconds": round(self._side_view_s, 4)}
                        if self.options.observation.side_views and decision is not None else None),
            im_threshold_m=threshold, dialogue_open=dialogue_open)

    def _result(self, end_reason: str, error: str | None, reached_goal: bool,
                undelivered: list[dict[str, Any]]) -> EpisodeResult:
        steps = self.episode.steps()
        if self.evaluator is None:
            # Played to its budget with nothing to judge it: neither a success nor a failure (docs/run-folder.md).
            end_reason = UNJUDGED if end_reason == "budget" else end_reason
            return EpisodeResult(
                task_id=self.task.id, quest=self.task.quest, category=self.task.category,
                granularity=self.options.granularity, agent=self.agent.name, success=None, seed=self.options.seed,
                trajectory_digest=trajectory_digest(steps), steps_used=self.step, end_reason=end_reason, error=error,
                metrics=unjudged_metrics([s.facts for s in steps]), privileged=self.options.privileged,
                reached_goal_area=None, failure_category_suggestion="",
                side_views=self.options.observation.side_view_mode if self.options.observation.side_views else None,
                game=self.game.info.name, undelivered_interventions=tuple(undelivered),
                audio=self.episode.audio_state, audio_mode=self.options.observation.audio, unjudged=UNJUDGED_WHY)
        met = self.evaluator.successes[0] if self.evaluator.successes and end_reason not in NO_RESULT else None
        success = met is not None
        if success:
            self.episode.set_success_step(int(met["step"]))
        metrics = episode_metrics([s.facts for s in steps], success, reached_goal, self._goal,
                                  judged=end_reason not in ("stopped", "interrupted", *NO_RESULT))
        return EpisodeResult(
            task_id=self.task.id, quest=self.task.quest, category=self.task.category,
            granularity=self.options.granularity, agent=self.agent.name, success=success,
            success_step=int(met["step"]) if met is not None else None,
            success_source=str(met["source"]) if met is not None else None, seed=self.options.seed,
            trajectory_digest=trajectory_digest(steps),
            steps_used=self.step, end_reason="success" if success else end_reason, error=error,
            failure_category_suggestion=metrics.failure_category, metrics=metrics.to_json(),
            privileged=self.options.privileged, reached_goal_area=reached_goal,
            # "instant" side views are a built-in-world shortcut no emulator has: such results are not comparable.
            side_views=self.options.observation.side_view_mode if self.options.observation.side_views else None,
            game=self.game.info.name, undelivered_interventions=tuple(undelivered), audio=self.episode.audio_state,
            audio_mode=self.options.observation.audio)
