"""Proving tasks solvable: drive each one's reference route with the privileged scripted driver on a fresh game of
its backend, and judge the result against its budget and recorded reference length.

The library behind `python main.py tasks validate` (and anything else that needs the verdict, such as the
studio): it returns verdicts and leaves the printing to the caller.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from core.backends.profile import BackendProfile
from core.backends.session import BackendSession
from core.evaluation.conditions import flags_named
from core.evaluation.driver import DriveResult, ScriptedDriver
from core.evaluation.profile import load_profile
from core.evaluation.tasks import Task
from core.game.errors import GameError

SOLVED, FAILED = "SOLVED", "FAILED"


@dataclass(frozen=True)
class TaskVerdict:
    task_id: str
    verdict: str          # SOLVED or FAILED
    detail: str           # what happened: the success step against the reference, or why it failed
    steps: int            # steps the driver took
    seconds: float        # wall time of the drive
    success_step: int | None = None
    retried: tuple[str, ...] = ()  # why each earlier attempt failed

    @property
    def solved(self) -> bool:
        return self.verdict == SOLVED


def judge_drive(task: Task, result: DriveResult, tolerance: float) -> tuple[str, str]:
    """(SOLVED or FAILED, detail) for one drive of `task`: solved within its budget, and within `tolerance` (a
    fraction) of its reference length where the backend is not deterministic."""
    success_step = result.success_step
    if not result.success or success_step is None:
        return FAILED, result.message
    detail = f"success at step {success_step}"
    if success_step > task.step_budget:
        return FAILED, detail + f", over the budget of {task.step_budget}"
    reference = task.reference_steps
    if reference:
        allowed = max(1, round(reference * tolerance)) if tolerance > 0 else 0
        detail += f" (reference {reference}" + (f" ± {allowed})" if tolerance > 0 else ")")
        if tolerance > 0 and abs(success_step - reference) > allowed:
            return FAILED, detail + ": the route no longer matches its reference; rerun with --write-reference " \
                                    "if the game changed"
    return SOLVED, detail


def walking_speed(backend: BackendProfile) -> float | None:
    """An external game's walking speed, in its profile's units per second, from its motion calibration (the
    driver measures it itself where it measures the camera); None: the driver's default."""
    motion = backend.continuous_motion
    if backend.kind != "external" or motion is None:
        return None
    seconds = motion.seconds[-1]
    return motion.expected_metres(0.0, 1.0, seconds) / seconds or None


def drive_tasks(backend: BackendProfile, tasks: Sequence[Task], profile_path: Path | None = None,
                on_verdict: Callable[[TaskVerdict], None] | None = None) -> list[TaskVerdict]:
    """Drive every task of `backend` in one game session; a verdict per task, in order (also handed to
    `on_verdict` as each one is known). With `profile_path` the evaluator judges with that memory profile."""
    profile = load_profile(profile_path or backend.memory_profile_path)  # what the evaluator judges with
    validation = backend.validation
    external = backend.kind == "external"
    verdicts: list[TaskVerdict] = []

    def record(verdict: TaskVerdict) -> None:
        verdicts.append(verdict)
        if on_verdict is not None:
            on_verdict(verdict)

    first = tasks[0].start_for_reset() if tasks else None
    try:
        session = BackendSession.open(backend, start_state=first if isinstance(first, str) else None,
                                      evaluator_profile=profile_path)
    except GameError as exc:
        for task in tasks:
            record(TaskVerdict(task.id, FAILED, f"could not start the {backend.name} backend: {exc}", 0, 0.0))
        return verdicts
    with session:
        for task in tasks:
            missing = sorted(flags_named(task.success) - set(profile.flags))
            if missing:
                record(TaskVerdict(task.id, FAILED, f"the profile {profile.name!r} cannot judge it: it reads no flag "
                                                    f"{', '.join(missing)}", 0, 0.0))
                continue
            started = time.perf_counter()
            result: DriveResult | None = None
            retried: list[str] = []
            for attempt in range(validation.retries + 1):
                try:
                    session.prepare(task.start_for_reset())
                    assert session.evaluator is not None
                    driver = ScriptedDriver(session.game, session.evaluator, steering="turn" if external else "stick",
                                            arrive=validation.arrive_m, settle_s=backend.step_settle_s,
                                            reads_camera="camera_yaw" in profile.fields,
                                            reads_dialogue="dialogue_active" in profile.fields,
                                            walk_speed=walking_speed(backend))
                    result = driver.drive(task)
                except GameError as exc:
                    result = DriveResult(task.id, False, 0, None, f"the game failed: {exc}")
                if result.success and result.success_step is not None and result.success_step <= task.step_budget:
                    break
                if attempt < validation.retries:
                    retried.append(result.message or "over the budget")
            assert result is not None
            verdict, detail = judge_drive(task, result, validation.steps_tolerance)
            record(TaskVerdict(task.id, verdict, detail, result.steps, time.perf_counter() - started,
                               result.success_step, tuple(retried)))
    return verdicts
