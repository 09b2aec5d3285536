"""One episode of a batch run: the single code path for "run this episode into this folder and return its row".

The local pool calls `play_episode` in a worker thread with the run folder itself as `root`; a Ray worker
calls it with a private folder on its own node and then sends the files back to the driver
(core/cluster/ray_executor.py). Everything else (which episodes, where rows are written, retries, stops)
belongs to the driver, so serial, pool and Ray runs of the same episode give the same row.

Files an episode writes, relative to `root` (and so to the run folder): `episodes/KEY.h5`, and with
self-reflection `experience/episodes/KEY.json` (docs/reflection.md).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from core.agents.models.rate_limit import RequestLimiter
from core.agents.reflection import ExperienceLibrary
from core.backends.profile import BackendProfile, load_backend, position_units, with_memory_profile
from core.backends.session import FULL_EVALUATOR_HZ, LOCKSTEP_EVALUATOR_HZ, BackendSession
from core.game.builtin import BuiltinWorld
from core.game.errors import GameError
from core.session import run_folder
from core.session.batch_control import INTERRUPTED, Stoppable
from core.session.episodes import EpisodeSpec, make_agent
from core.session.free_play import FreePlay
from core.session.runner import EpisodeRunner, RunOptions
from core.session.startup_gate import STARTUP_GATE, Gate

EXPERIENCE_DIR = "experience"
RESULT, SKIPPED = "result", "skipped"  # and INTERRUPTED: the three kinds of outcome
KILL_GRACE_S = 5.0  # after a timeout, how long a clean stop may take before the game is killed


def episode_file(key: str) -> str:
    return f"{run_folder.EPISODES}/{key}.h5"


def lessons_file(key: str) -> str:
    return f"{EXPERIENCE_DIR}/episodes/{key}.json"


@dataclass(frozen=True)
class EpisodeJob:
    """Everything one episode needs, in plain picklable values (a Ray task carries it to another machine)."""

    spec: EpisodeSpec
    options: RunOptions                  # the run's options; the episode's seed is derived from them (spec.seed)
    agent_options: Mapping[str, Any] = field(default_factory=dict[str, Any])  # model_id, base_url, reflection_every
    experience: ExperienceLibrary | None = None  # the library a reflecting agent starts from
    replies: tuple[str, ...] | None = None       # a replay agent's replies, read once on the driver
    timeout_s: float | None = None                # --episode-timeout
    attempt: int = 1                              # this run's try of the episode (--retries)
    backend: str = "builtin"                      # a shipped backend's name, or a backend file's absolute path
    memory_profile: str | None = None             # --profile: a memory profile file read instead of the backend's
    attach: str | None = None                     # drive a game already running (--attach): see BackendSession

    @property
    def key(self) -> str:
        return self.spec.key


@dataclass(frozen=True)
class EpisodeOutcome:
    """RESULT: `row` is a result or an infrastructure error; INTERRUPTED: stopped part-way (no result);
    SKIPPED: never started because the run was stopping. `files`: what it wrote, relative to its root."""

    kind: str
    row: dict[str, Any] | None = None
    files: tuple[str, ...] = ()


class EpisodeControl(Protocol):
    """The run's stop switch as an episode sees it (core/session/batch_control.py, or a Ray coordinator)."""

    @property
    def stopping(self) -> bool: ...

    def start(self, runner: Stoppable) -> bool: ...

    def finished(self, runner: Stoppable) -> None: ...


def episode_options(job: EpisodeJob, backend: BackendProfile) -> RunOptions:
    options = job.options
    return RunOptions(granularity=job.spec.granularity, paradigm=options.paradigm, observation=options.observation,
                      interventions=options.interventions, step_budget=options.step_budget,
                      seed=job.spec.seed(options.seed), frame_every_ticks=options.frame_every_ticks,
                      settle_s=max(options.settle_s, backend.step_settle_s), motion=backend.continuous_motion,
                      position_units=position_units(backend))


class _Watchdog:
    """--episode-timeout: past the limit, stop the runner with an error; if it cannot stop (a game that no
    longer answers holds it inside a request), kill the game and evaluator, which ends the request at once."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self.fired = threading.Event()
        self._done = threading.Event()
        self._timer: threading.Timer | None = None

    @property
    def message(self) -> str:
        return (f"the episode ran past its time limit of {self.seconds:g} s (--episode-timeout) and was stopped; "
                "this is not a result")

    def arm(self, runner: EpisodeRunner, pids: tuple[int, ...]) -> None:
        if not self.seconds:
            return

        def fire() -> None:
            self.fired.set()
            runner.stop(run_folder.ERROR, error=self.message)
            if not self._done.wait(KILL_GRACE_S):
                for pid in pids:  # our own children, each in a session (process group) of its own
                    with contextlib.suppress(OSError):
                        os.killpg(pid, signal.SIGKILL)

        self._timer = threading.Timer(self.seconds, fire)
        self._timer.daemon = True
        self._timer.start()

    def disarm(self) -> None:
        self._done.set()
        if self._timer is not None:
            self._timer.cancel()


def _error_row(job: EpisodeJob, agent_name: str, game: str, message: str) -> dict[str, Any]:
    task = job.spec.task
    return {"task_id": task.id, "granularity": job.spec.granularity, "agent": agent_name, "game": game,
            "success": False, "end_reason": run_folder.ERROR, "error": message, "category": task.category,
            "quest": task.quest}


def _our_processes(session: BackendSession) -> tuple[int, ...]:
    """What a timed-out episode may kill: the evaluator, and the game only where it is the built-in world we
    launched (an external game is ended by its own lifecycle, never by a signal from here; a game we
    attached to is never ours to end)."""
    pids = [session.evaluator.pid] if session.evaluator is not None else []
    if isinstance(session.game, BuiltinWorld) and session.game.launched_here:
        pids.append(session.game.pid)
    return tuple(pids)


def _start_session(job: EpisodeJob, backend: BackendProfile, start: str | dict[str, Any] | None,
                   control: EpisodeControl, gate: Gate) -> BackendSession | None:
    """The episode's game and evaluator (none for free play), up and in its start state (None: as the game
    launched), started in its turn (`gate`); None when the run stops before its turn comes."""
    judged = not isinstance(job.spec.task, FreePlay)
    with gate.turn(lambda: control.stopping) as admitted:
        if not admitted:
            return None
        if job.attach is not None:
            session = BackendSession.attach_to(backend, job.attach, with_evaluator=judged)
        else:
            lockstep = backend.kind == "builtin" and backend.builtin_spec.mode == "lockstep"
            session = BackendSession.open(backend, start_state=start if isinstance(start, str) else None,
                                          with_evaluator=judged,
                                          evaluator_hz=LOCKSTEP_EVALUATOR_HZ if lockstep else FULL_EVALUATOR_HZ)
        try:
            if start is not None:
                session.prepare(start)
        except BaseException:
            session.close()
            raise
        return session


def play_episode(job: EpisodeJob, root: Path, control: EpisodeControl,
                 limiter: RequestLimiter | None = None, gate: Gate = STARTUP_GATE) -> EpisodeOutcome:
    """Run `job` in its own world and evaluator processes, recording into `root`; its outcome and row. Its
    start-up waits for a turn at `gate` (the threads of this process take turns; Ray's workers, the machine's).

    Raises only for what is no fault of the episode (a bug, a full disk); a game or evaluator that dies or
    cannot start, and an agent that fails for good, end as an infrastructure-error row.
    """
    if control.stopping:
        return EpisodeOutcome(SKIPPED)
    spec = job.spec
    backend = with_memory_profile(load_backend(job.backend), job.memory_profile)
    options = episode_options(job, backend)
    actions = backend.action_set()
    written: list[str] = []
    library = None
    if job.experience is not None:
        library = job.experience.copy_to(root / lessons_file(job.key))
        written.append(lessons_file(job.key))
    agent = make_agent(spec.agent_spec, actions, options.seed, options.paradigm,
                       {**job.agent_options, "granularity": spec.granularity, "experience": library,
                        "limiter": limiter, "replies": job.replies})
    path = root / episode_file(job.key)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)  # an earlier interrupted or failed try: replaced, never appended to
    watchdog = _Watchdog(job.timeout_s)
    start = spec.task.start_for_reset()
    try:
        session = _start_session(job, backend, start, control, gate)
        if session is None:  # the run stopped while it waited for its turn to start
            return EpisodeOutcome(SKIPPED, files=tuple(written))
        with session:
            # A task always has its evaluator (the session refuses to open without a profile); free play none.
            evaluator = session.evaluator if not isinstance(spec.task, FreePlay) else None
            runner = EpisodeRunner(session.game, evaluator, agent, actions, spec.task, options, path)
            if not control.start(runner):
                return EpisodeOutcome(SKIPPED, files=tuple(written))
            watchdog.arm(runner, _our_processes(session))
            try:
                result = runner.run().to_json()  # the row results.jsonl stores (docs/run-folder.md)
            except GameError as exc:  # it died before the first step: the runner names the cause all the same
                cause = runner.root_cause(exc)
                result = _error_row(job, agent.name, backend.name,
                                    f"{watchdog.message}; {cause}" if watchdog.fired.is_set() else cause)
            finally:
                watchdog.disarm()
                control.finished(runner)
    except GameError as exc:
        if control.stopping:  # stopped while its world was starting: not run, not an error
            return EpisodeOutcome(SKIPPED, files=tuple(written))
        cause = f"{watchdog.message}; {exc}" if watchdog.fired.is_set() else str(exc)
        result = _error_row(job, agent.name, backend.name, cause)
    if path.exists():
        written.insert(0, episode_file(job.key))
    if result["end_reason"] == INTERRUPTED:  # its file says so; it is no result and runs again on resume
        return EpisodeOutcome(INTERRUPTED, files=tuple(written))
    result.update(key=job.key, trial=spec.trial, agent_spec=spec.agent_spec,
                  episode=episode_file(job.key) if path.exists() else None)
    return EpisodeOutcome(RESULT, result, tuple(written))
