"""`python main.py tasks`: list the task suite, and validate task files.

    python main.py tasks list
    python main.py tasks validate assets/tasks/q01_bread_navigation.yaml     # schema only
    python main.py tasks validate PATH --drive                               # also drive its reference route
    python main.py tasks validate --all                                      # every task, driven end to end
    python main.py tasks try my_task.yaml       # an authored task: does its start load, is it solvable?
    python main.py tasks validate PATH --profile found.yaml   # judged with another memory profile

Driving uses the privileged scripted driver: a fresh built-in world and evaluator, the task's
start state, its reference route, and success judged by the evaluator. With --profile, the
evaluator reads the game through that profile instead of the built-in one (for instance one
the memory finder wrote): the end-to-end proof that a found profile works.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

from core.evaluation.profile import ProfileError, load_profile
from core.evaluation.tasks import Task, TaskFileError, load_task, task_files
from core.paths import DEFAULT_WORLD, PROFILES_DIR, TASKS_DIR


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = sub.add_parser("list", help="id, quest, category, budget and reference length of every task")
    listing.add_argument("--folder", type=Path, default=TASKS_DIR)
    validate = sub.add_parser("validate", help="check task files (and drive them with --drive / --all)")
    validate.add_argument("paths", nargs="*", type=Path)
    validate.add_argument("--all", action="store_true", help="every task in the folder, each driven end to end")
    validate.add_argument("--drive", action="store_true", help="drive the reference route of each named task")
    validate.add_argument("--folder", type=Path, default=TASKS_DIR)
    validate.add_argument("--write-reference", action="store_true",
                          help="write the measured reference_steps back into each file")
    validate.add_argument("--profile", type=Path, help="judge with this memory profile instead of the built-in "
                                                       "one (implies --drive)")
    trying = sub.add_parser("try", help="check one task's start state loads and its reference route succeeds")
    trying.add_argument("path", type=Path)


def _context() -> tuple[list[str], list[str]]:
    import yaml

    flags = load_profile(PROFILES_DIR / "builtin_world.yaml").flags
    start_states = list(yaml.safe_load(DEFAULT_WORLD.read_text())["start_states"])
    return flags, start_states


def run(args: argparse.Namespace) -> int:
    flags, start_states = _context()
    if args.action == "list":
        return _list(args.folder, flags, start_states)
    if args.action == "try":
        return _try(args.path, flags, start_states)
    paths = task_files(args.folder) if args.all else args.paths
    if not paths:
        print("error: name task files, or use --all", file=sys.stderr)
        return 2
    tasks: list[tuple[Path, Task]] = []
    failed = 0
    for path in paths:
        try:
            tasks.append((path, load_task(path, flags, start_states)))
            print(f"ok      {path}")
        except TaskFileError as exc:
            print(f"INVALID {exc}")
            failed += 1
    if (args.all or args.drive or args.profile) and tasks:
        if args.profile is not None:
            try:
                judged_by = load_profile(args.profile)
                judged_by.check_usable()
            except ProfileError as exc:
                print(f"error: {exc}", file=sys.stderr)
                return 2
            print(f"judging with {args.profile} ({judged_by.name})")
            failed += _drive(tasks, False, args.profile)
        else:
            failed += _drive(tasks, args.write_reference)
    print(f"{len(paths) - failed} of {len(paths)} task(s) passed")
    return 1 if failed else 0


def _list(folder: Path, flags: list[str], start_states: list[str]) -> int:
    print(f"{'id':28s} {'quest':24s} {'category':12s} {'budget':>6s} {'ref':>5s}")
    problems = 0
    for path in task_files(folder):
        try:
            task = load_task(path, flags, start_states)
        except TaskFileError as exc:
            print(f"{path.stem:28s} INVALID: {str(exc).splitlines()[0]}")
            problems += 1
            continue
        reference = str(task.reference_steps) if task.reference_steps else "-"
        print(f"{task.id:28s} {task.quest:24s} {task.category:12s} {task.step_budget:>6d} {reference:>5s}")
    return 1 if problems else 0


def _drive(tasks: list[tuple[Path, Task]], write_reference: bool, profile_path: Path | None = None) -> int:
    from core.evaluation.client import BUILTIN_PROFILE, EvaluatorClient
    from core.evaluation.conditions import flags_named
    from core.evaluation.driver import ScriptedDriver
    from core.game.builtin import BuiltinWorld

    profile_path = profile_path or BUILTIN_PROFILE
    profile = load_profile(profile_path)
    failed = 0
    with BuiltinWorld.launch(renderer="software") as world, \
            EvaluatorClient.launch(world.pid, profile=profile_path) as evaluator:
        evaluator.wait_locked()
        for path, task in tasks:
            missing = sorted(flags_named(task.success) - set(profile.flags))
            if missing:
                print(f"FAILED  {task.id:28s} the profile {profile.name!r} cannot judge it: it reads no flag "
                      f"{', '.join(missing)}")
                failed += 1
                continue
            started = time.perf_counter()
            driver = ScriptedDriver(world, evaluator, reads_camera="camera_yaw" in profile.fields,
                                    reads_dialogue="dialogue_active" in profile.fields)
            result = driver.drive(task)
            elapsed = time.perf_counter() - started
            within = result.success and result.success_step is not None and result.success_step <= task.step_budget
            verdict = "SOLVED " if within else "FAILED "
            detail = f"success at step {result.success_step}" if result.success else result.message
            if result.success and not within:
                detail += f", over the budget of {task.step_budget}"
            print(f"{verdict} {task.id:28s} {result.steps:4d} steps  {elapsed:5.1f} s  {detail}  [privileged driver]")
            if not within:
                failed += 1
            elif write_reference:
                _write_reference(path, result.success_step or result.steps)
    return failed


def _try(path: Path, flags: list[str], start_states: list[str]) -> int:
    from core.authoring.try_task import try_task

    try:
        task = load_task(path, flags, start_states)
    except TaskFileError as exc:
        print(f"INVALID {exc}")
        return 1
    started = time.perf_counter()
    result = try_task(task)
    elapsed = time.perf_counter() - started
    detail = f"success at step {result.success_step} of {task.step_budget}" if result.success else result.reason
    verdict = "SOLVED " if result.success else "FAILED "
    print(f"{verdict} {task.id:28s} {result.steps:4d} steps  {elapsed:5.1f} s  {detail}  [privileged driver]")
    return 0 if result.success else 1


def _write_reference(path: Path, steps: int) -> None:
    text = path.read_text()
    line = f"reference_steps: {steps}"
    text = re.sub(r"(?m)^reference_steps: \d+$", line, text) if "reference_steps:" in text else text + line + "\n"
    path.write_text(text)
