"""try_task: does an authored task work? Its start state loads, and its reference route reaches success.

PRIVILEGED, like the scripted driver it uses: it steers by ground truth, exactly as
`tasks validate --drive` does, to prove the task solvable; nothing it does is an agent's run.
It works on the studio's running world and evaluator, or launches its own (`tasks try FILE`).
"""

from __future__ import annotations

import contextlib
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from core.authoring.context import world_start_states
from core.evaluation.client import BUILTIN_PROFILE, EvaluatorClient, EvaluatorError
from core.evaluation.conditions import Condition, Flag, Reach, sub_conditions
from core.evaluation.driver import DriveResult, ScriptedDriver
from core.evaluation.profile import load_profile
from core.evaluation.sample import StateSample
from core.evaluation.tasks import Task
from core.game.builtin import BuiltinWorld
from core.game.connection import GameConnection
from core.game.errors import GameError, InvalidStartStateError, UnknownStartStateError

# After a reset the character must stand this close to the start position: captured positions are
# rounded to 1 cm and the world may push one out of a wall by up to 25 cm (core/world/game.py).
START_TOLERANCE_M = 0.3
ANGLE_TOLERANCE_DEG = 1.0
Outcome = Literal["solved", "start_rejected", "start_mismatch", "met_at_start", "route_blocked", "goal_not_reached",
                  "over_budget", "game_error"]


@dataclass(frozen=True)
class TryResult:
    task_id: str
    success: bool
    outcome: Outcome
    steps: int                      # pad actions the driver took (each is one agent step)
    success_step: int | None        # the step success was credited to, if it came
    reason: str                     # empty when solved; otherwise what went wrong, for the user
    positions: tuple[tuple[float, float], ...] = ()
    privileged: bool = True         # steered by ground truth: never an agent's result


def try_task(task: Task, world: GameConnection | None = None, evaluator: EvaluatorClient | None = None,
             *, profile: Path = BUILTIN_PROFILE, tolerance_m: float = START_TOLERANCE_M) -> TryResult:
    """Reset to the task's start and check the evaluator sees it there, then drive the reference route.

    Without `world`, launches a built-in world (and closes it after); without `evaluator`, launches one
    for `world`. A passed-in world is left where the route ended, and a passed-in evaluator with no task
    set (set yours again). A game or evaluator failure is reported as the outcome "game_error".
    """
    if evaluator is not None and world is None:
        raise ValueError("an evaluator watches one game: pass the world it was launched for as well")
    flag_names = list(load_profile(profile).flags)
    borrowed_evaluator = evaluator is not None
    try:
        with contextlib.ExitStack() as owned:
            if world is None:
                world = owned.enter_context(BuiltinWorld.launch(renderer="software"))
            if evaluator is None:
                evaluator = owned.enter_context(EvaluatorClient.launch(world.pid, profile))
                evaluator.wait_locked()
            try:
                return _try(task, world, evaluator, flag_names, tolerance_m)
            finally:
                if borrowed_evaluator:
                    with contextlib.suppress(EvaluatorError):  # gone already: nothing to clear
                        evaluator.clear_task()
    except GameError as exc:
        return _failed(task, "game_error", f"the game or the evaluator failed: {exc}")


def _try(task: Task, world: GameConnection, evaluator: EvaluatorClient, flag_names: list[str],
         tolerance_m: float) -> TryResult:
    try:
        world.reset(task.start_for_reset())
    except (UnknownStartStateError, InvalidStartStateError) as exc:
        return _failed(task, "start_rejected", f"the start state does not load: {exc}")
    expected = _expected_start(task, world)
    if expected is not None:
        problems = _start_problems(expected, evaluator.sample_after(time.time()), flag_names, tolerance_m)
        if problems:
            return _failed(task, "start_mismatch", "the start state does not load as written: " + "; ".join(problems))
    if not task.reference_route:
        return _failed(task, "goal_not_reached", "the task has no reference route: add waypoints for the driver")
    drive = ScriptedDriver(world, evaluator).drive(task)
    return _judged(task, drive, evaluator.sample_after(time.time()), flag_names)


def _judged(task: Task, drive: DriveResult, last: StateSample, flag_names: list[str]) -> TryResult:
    positions = tuple(drive.positions)
    if drive.success and drive.success_step is not None and drive.success_step <= task.step_budget:
        return TryResult(task.id, True, "solved", drive.steps, drive.success_step, "", positions)
    if drive.success:
        reason = f"success came at step {drive.success_step}, over the step budget of {task.step_budget}"
        return TryResult(task.id, False, "over_budget", drive.steps, drive.success_step, reason, positions)
    if drive.met_at_start:
        return TryResult(task.id, False, "met_at_start", 0, None, drive.message, positions)
    if drive.blocked:
        return TryResult(task.id, False, "route_blocked", drive.steps, None,
                         f"the reference route is blocked: {drive.message}", positions)
    missing = _missing(task.success, last, flag_names)
    reason = "the route ended without reaching the goal" + (f": {'; '.join(missing)}" if missing else "")
    return TryResult(task.id, False, "goal_not_reached", drive.steps, None, reason, positions)


def _failed(task: Task, outcome: Outcome, reason: str) -> TryResult:
    return TryResult(task.id, False, outcome, 0, None, reason)


def _expected_start(task: Task, world: GameConnection) -> dict[str, Any] | None:
    """The pose the reset should give: inline in the task, or the named start as the world file writes it
    (None when the running world is not the one the world file describes: then only the reset is checked)."""
    if not isinstance(task.start_state, str):
        return task.start_pose({})
    name, starts = world_start_states()
    return task.start_pose(starts) if world.info.name == name else None


def _start_problems(expected: dict[str, Any], sample: StateSample, flag_names: list[str],
                    tolerance_m: float) -> list[str]:
    problems: list[str] = []
    x, y = expected["pos"]
    off = math.hypot(sample.x - x, sample.y - y)
    if off > tolerance_m:
        problems.append(f"the character is at ({sample.x:.2f}, {sample.y:.2f}), {off:.2f} m from the start "
                        f"position ({x:g}, {y:g})")
    facing = float(expected.get("facing", 0.0))
    camera_yaw = expected.get("camera_yaw")
    angles = [("facing", facing, sample.facing),
              ("camera_yaw", facing if camera_yaw is None else float(camera_yaw), sample.camera_yaw),
              ("camera_pitch", float(expected.get("camera_pitch", -12.0)), sample.camera_pitch)]
    for name, want, got in angles:
        if abs((got - want + 180.0) % 360.0 - 180.0) > ANGLE_TOLERANCE_DEG:
            problems.append(f"{name} is {got:.1f}°, not {want:g}°")
    wanted = list(expected.get("flags") or [])
    unknown = [n for n in wanted if n not in flag_names]
    if unknown:
        problems.append(f"flags {unknown} are not in the game profile")
    have = [name for bit, name in enumerate(flag_names) if sample.flags >> bit & 1]
    if sorted(have) != sorted(n for n in wanted if n in flag_names):
        problems.append(f"the flags set are {have}, not {wanted}")
    return problems


def _missing(condition: Condition, sample: StateSample, flag_names: list[str]) -> list[str]:
    """What of the success condition the final sample lacks, to say why the goal was not reached."""
    if isinstance(condition, Reach):
        spec = condition.reach
        distance = math.hypot(sample.x - spec.x, sample.y - spec.y)
        if distance > spec.radius:
            return [f"the character stopped {distance:.1f} m from the goal ({spec.x:g}, {spec.y:g}), "
                    f"radius {spec.radius:g} m"]
        if spec.map_id is not None and sample.map_id != spec.map_id:
            return [f"the character is on map {sample.map_id}, not {spec.map_id}"]
        return []
    if isinstance(condition, Flag):
        name, equals = condition.flag.name, condition.flag.equals
        bit = flag_names.index(name) if name in flag_names else None
        if bit is None or sample.has_flag(bit) != equals:
            return [f"flag {name} is {'not set' if equals else 'still set'}"]
        return []
    return [problem for child in sub_conditions(condition) for problem in _missing(child, sample, flag_names)]
