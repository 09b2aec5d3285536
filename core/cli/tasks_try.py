"""`python main.py tasks try`: does an authored task work? Its start state loads and its reference route succeeds,
on the game the task names (or --backend), read through its memory profile (or --profile).

    python main.py tasks try my_task.yaml
    python main.py tasks try --tasks ~/games/my_game/tasks --profile ~/games/my_game/found.yaml

PRIVILEGED, like `tasks validate --drive`: the scripted driver steers by ground truth (core/authoring/try_task.py).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from core.backends.profile import BackendProfile, load_backend, with_memory_profile
from core.backends.session import BackendSession
from core.evaluation.profile import load_profile
from core.evaluation.tasks import Task, TaskFileError, load_task
from core.session.task_source import TaskSourceError, given_task_files, named_backend, same_backend


def add_arguments(trying: argparse.ArgumentParser) -> None:
    trying.add_argument("paths", nargs="*", type=Path, metavar="PATH")
    trying.add_argument("--tasks", type=Path, action="append", default=[], metavar="PATH|DIR",
                        help="task files: one file, or every *.yaml in a folder (may be repeated)")
    trying.add_argument("--backend", metavar="NAME|PATH",
                        help="the game to try them on (default: the backend each task names); a task for another "
                             "backend is refused, naming both")
    trying.add_argument("--profile", type=Path, metavar="PATH",
                        help="read the game through this memory profile instead of the backend's own")


def task_paths(args: argparse.Namespace) -> list[Path]:
    """The task files named on the command line and by --tasks. TaskSourceError when there are none, or a
    --tasks path does not exist, saying what was given."""
    paths = [*args.paths, *given_task_files(args.tasks)]
    if not paths:
        raise TaskSourceError("name a task file (or --tasks PATH|DIR) to try")
    return paths


def backend_for(path: Path, chosen: str | None, profile: Path | None) -> BackendProfile:
    """The backend a task is tried on: --backend (refused when the task names another), else the one it names;
    read through --profile when given."""
    named = named_backend(path)
    if chosen is not None and not same_backend(named, chosen):
        raise TaskFileError(f"{path}: the task is for backend {named!r}, but --backend {chosen} was given")
    return with_memory_profile(load_backend(chosen or named), profile)


def try_one(path: Path, backend: BackendProfile) -> int:
    """Load the task against its backend, then try it on a fresh game; prints one line, returns 0 if solved."""
    from core.authoring.try_task import try_task

    profile = backend.memory_profile_path
    states = backend.start_states
    try:
        task = load_task(path, load_profile(profile).flags, states)
    except TaskFileError as exc:
        print(f"INVALID {exc}")
        return 1
    started = time.perf_counter()
    first = task.start_for_reset()
    with BackendSession.open(backend, start_state=first if isinstance(first, str) else None) as session:
        assert session.evaluator is not None  # a backend with a profile is always judged
        result = try_task(task, session.game, session.evaluator, profile=profile)
    return _report(task, result.success, result.steps, result.success_step, result.reason,
                   time.perf_counter() - started)


def _report(task: Task, success: bool, steps: int, success_step: int | None, reason: str, elapsed: float) -> int:
    detail = f"success at step {success_step} of {task.step_budget}" if success else reason
    verdict = "SOLVED " if success else "FAILED "
    print(f"{verdict} {task.id:28s} {steps:4d} steps  {elapsed:5.1f} s  {detail}  [privileged driver]", flush=True)
    return 0 if success else 1


def run(args: argparse.Namespace) -> int:
    """Try every named task, each on a fresh game of its backend; 1 if any failed. A backend or profile that
    cannot be used raises (main.py prints it as one `error:` line)."""
    failed = 0
    for path in task_paths(args):
        failed += try_one(path, backend_for(path, args.backend, args.profile))
    return 1 if failed else 0
