"""`python main.py tasks`: list the task suites of every backend, and validate task files.

    python main.py tasks list                                   # every backend's tasks
    python main.py tasks list --backend minetest
    python main.py tasks validate assets/tasks/q01_bread_navigation.yaml     # schema only
    python main.py tasks validate PATH --drive                               # also drive its reference route
    python main.py tasks validate --all                                      # every task of every backend, driven
    python main.py tasks validate --all --backend minetest
    python main.py tasks try my_task.yaml       # an authored task: does its start load, is it solvable?
    python main.py tasks validate PATH --profile found.yaml   # judged with another memory profile

Driving uses the privileged scripted driver: a fresh game of the task's backend and its evaluator, the
task's start state, its reference route, and success judged by the evaluator. Real-time backends
(Minetest) are not deterministic: their backend file gives the tolerances (arrival distance, how far
the step count may stray from reference_steps, retries). With --profile, the evaluator reads the game
through that memory profile instead of the backend's own (for instance one the memory finder wrote):
the end-to-end proof that a found profile works.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core.backends.profile import (
    BackendFileError,
    BackendProfile,
    backend_path,
    is_backend_path,
    known_backends,
    load_backend,
)
from core.cli import tasks_try
from core.evaluation.profile import ProfileError, load_profile
from core.evaluation.tasks import Task, TaskFileError, load_task, suite_folder, task_files
from core.paths import TASKS_DIR
from core.session.task_source import TaskSourceError, named_backend, same_backend


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = sub.add_parser("list", help="backend, id, quest, category, budget and reference length of every task")
    listing.add_argument("--folder", type=Path, help="one folder of task files (default: every backend's suite)")
    listing.add_argument("--backend", default="all", help="a backend name, or all (default)")
    validate = sub.add_parser("validate", help="check task files (and drive them with --drive / --all)")
    validate.add_argument("paths", nargs="*", type=Path)
    validate.add_argument("--tasks", type=Path, action="append", default=[], metavar="PATH|DIR",
                          help="task files: one file, or every *.yaml in a folder (may be repeated)")
    validate.add_argument("--all", action="store_true", help="every task of the backend(s), each driven end to end")
    validate.add_argument("--drive", action="store_true", help="drive the reference route of each named task")
    validate.add_argument("--backend", default="all", metavar="NAME|PATH",
                          help="a backend name or file. With --all: its tasks (a file's: those in --tasks DIR, else in "
                               "tasks/ beside it); with task files: the backend they are checked and driven on")
    validate.add_argument("--folder", type=Path, default=TASKS_DIR, help=argparse.SUPPRESS)
    validate.add_argument("--write-reference", action="store_true",
                          help="write the measured reference_steps back into each file")
    validate.add_argument("--profile", type=Path, help="judge with this memory profile instead of the built-in "
                                                       "one (implies --drive)")
    tasks_try.add_arguments(sub.add_parser("try", help="check that tasks' start states load and their reference "
                                                       "routes succeed (each on its own backend)"))
    suite = sub.add_parser("suite", help="check the built-in suite's task files against its manifest "
                                         "(assets/tasks/_suite.yaml), or rewrite it after changing a task on purpose")
    suite.add_argument("--write", action="store_true", help="record the suite tasks' files as they are now")


@dataclass(frozen=True)
class Context:
    """What a backend's task files are checked against: its flag names and start state names."""

    backend: BackendProfile
    flags: list[str]
    start_states: list[str] | None

    @classmethod
    def of(cls, name: str) -> Context:
        import yaml

        backend = load_backend(name)
        flags = load_profile(backend.memory_profile_path).flags
        states = backend.start_states
        if states is None:  # the built-in world: its world file names them
            states = list(yaml.safe_load(backend.resolve(backend.builtin_spec.world).read_text())["start_states"])
        return cls(backend, flags, states)


def _backends(choice: str) -> list[str]:
    if choice == "all":
        return [name for name in known_backends() if suite_folder(name).is_dir()]
    load_backend(choice)  # a clear error for an unknown name
    return [choice]


def _given_tasks(given: list[Path]) -> list[Path]:
    """--tasks: files as given, folders as their task files."""
    return [p for path in given for p in (task_files(path) if path.is_dir() else [path])]


def _suite_of(choice: str, given: list[Path]) -> tuple[list[Path], str]:
    """`--all`'s task files for one backend and where they were looked for: a named backend's suite folder; a
    backend file's --tasks, else the tasks/ folder beside it."""
    if given:
        return _given_tasks(given), ", ".join(str(p) for p in given)
    folder = backend_path(choice).parent / "tasks" if is_backend_path(choice) else suite_folder(choice)
    return (task_files(folder) if folder.is_dir() else []), str(folder)


def run(args: argparse.Namespace) -> int:
    contexts: dict[str, Context] = {}

    def context(name: str) -> Context:
        if name not in contexts:
            contexts[name] = Context.of(name)
        return contexts[name]

    try:
        if args.action == "list":
            return _list(args, context)
        if args.action == "try":
            return tasks_try.run(args)
        if args.action == "suite":
            return _suite(args.write)
        looked: list[str] = []
        if args.all:
            paths: list[Path] = []
            for name in _backends(args.backend):
                found, where = _suite_of(name, args.tasks)
                paths += found
                looked.append(where)
        else:
            paths = [*args.paths, *_given_tasks(args.tasks)]
        chosen = None if args.backend == "all" else args.backend
        if chosen is not None:
            context(chosen)  # a backend that cannot be used is said once, before any task
    except (BackendFileError, TaskSourceError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not paths:
        print(f"error: no task files in {', '.join(looked)}; name task files, or give --tasks PATH|DIR"
              if args.all else "error: name task files (or --tasks PATH|DIR), or use --all", file=sys.stderr)
        return 2
    tasks: list[tuple[Path, Task, str]] = []
    failed = 0
    for path in paths:
        try:
            named = named_backend(path)
            if chosen is not None and not same_backend(named, chosen):
                raise TaskFileError(f"{path}: the task is for backend {named!r}, but --backend {chosen} was given")
            key = chosen or named
            ctx = context(key)
            tasks.append((path, load_task(path, ctx.flags, ctx.start_states), key))
            print(f"ok      {path}")
        except (TaskFileError, BackendFileError) as exc:
            print(f"INVALID {exc}")
            failed += 1
    driving = bool(args.all or args.drive or args.profile)
    if driving and tasks:
        if args.profile is not None:
            try:
                judged_by = load_profile(args.profile)
                judged_by.check_usable()
            except ProfileError as exc:
                print(f"error: {exc}", file=sys.stderr)
                return 2
            print(f"judging with {args.profile} ({judged_by.name})")
        for name in sorted({key for _, _, key in tasks}):
            group = [(p, t) for p, t, key in tasks if key == name]
            failed += _drive(context(name).backend, group, args.write_reference and args.profile is None,
                             args.profile)
    if driving:
        print(f"{len(paths) - failed} of {len(paths)} task(s) passed (driven to success by the privileged driver)")
    else:
        print(f"{len(paths) - failed} of {len(paths)} task file(s) valid; not driven: add --drive to prove their "
              "reference routes reach success")
    if args.all and not args.tasks and "builtin" in _backends(args.backend):
        failed += _report_suite()
    return 1 if failed else 0


def _report_suite() -> int:
    """Say how the built-in suite's files stand against its manifest; 1 if a suite task is missing or changed."""
    from core.evaluation.tasks import SuiteError, check_suite

    try:
        check = check_suite()
    except SuiteError as exc:
        print(f"SUITE   {exc}")
        return 1
    for task_id in check.missing:
        print(f"SUITE   {task_id} is in the suite manifest but has no file in {TASKS_DIR}")
    for task_id in check.changed:
        print(f"SUITE   {task_id} differs from the version the suite manifest records; if the change is meant, "
              "record it with `python main.py tasks suite --write`")
    if check.others:
        print(f"note    {len(check.others)} task file(s) in {TASKS_DIR} are not part of the suite "
              f"(--protocol paper leaves them out): {', '.join(check.others)}")
    return 0 if check.intact else 1


def _suite(write: bool) -> int:
    from core.evaluation.tasks import SuiteError, read_suite_manifest, write_suite_manifest

    if write:
        try:
            ids = list(read_suite_manifest())
        except SuiteError:
            ids = [p.stem for p in task_files(TASKS_DIR)]
        missing = [task_id for task_id in ids if not (TASKS_DIR / f"{task_id}.yaml").is_file()]
        if missing:
            print(f"error: suite task file(s) missing: {', '.join(missing)}", file=sys.stderr)
            return 1
        write_suite_manifest(ids)
        print(f"recorded {len(ids)} suite task(s) in the manifest")
    status = _report_suite()
    if status == 0:
        print("the suite's task files match its manifest")
    return status


def _list(args: argparse.Namespace, context: Callable[[str], Context]) -> int:
    """Every backend's tasks; the built-in ones marked `suite` when the benchmark suite names them, and the
    user's own tasks (authored in the studio) listed apart, never mixed into a suite."""
    from core.evaluation.tasks import SuiteError, read_suite_manifest
    from core.paths import user_tasks_dir

    try:
        suite = set(read_suite_manifest())
    except SuiteError:
        suite: set[str] = set()
    print(f"{'backend':9s} {'id':30s} {'quest':22s} {'category':12s} {'budget':>6s} {'ref':>5s}  set")
    problems = 0
    groups: list[tuple[str | None, list[Path], str]]  # (backend, its task files, heading)
    if args.folder is not None:
        groups = [(None, task_files(args.folder), "")]
    else:
        groups = [(name, task_files(suite_folder(name)) if suite_folder(name).is_dir() else [], "")
                  for name in _backends(args.backend)]
        user = user_tasks_dir()
        if user.is_dir() and task_files(user):
            groups.append((None, task_files(user), f"your tasks ({user}; not part of any suite):"))
    for name, paths, heading in groups:
        if heading:
            print(heading)
        for path in paths:
            try:
                ctx = context(name or named_backend(path))
                task = load_task(path, ctx.flags, ctx.start_states)
            except (TaskFileError, BackendFileError) as exc:
                print(f"{name or '?':9s} {path.stem:30s} INVALID: {str(exc).splitlines()[0]}")
                problems += 1
                continue
            if args.backend not in ("all", task.backend):
                continue
            reference = str(task.reference_steps) if task.reference_steps else "-"
            member = "user" if heading else ("suite" if task.backend != "builtin" or task.id in suite else "other")
            print(f"{task.backend:9s} {task.id:30s} {task.quest:22s} {task.category:12s} {task.step_budget:>6d} "
                  f"{reference:>5s}  {member}")
    return 1 if problems else 0


def _drive(backend: BackendProfile, tasks: list[tuple[Path, Task]], write_reference: bool,
           profile_path: Path | None = None) -> int:
    from core.session.task_validation import TaskVerdict, drive_tasks

    paths = {task.id: path for path, task in tasks}

    def say(verdict: TaskVerdict) -> None:
        for reason in verdict.retried:
            print(f"retry   {verdict.task_id}: {reason}")
        print(f"{verdict.verdict:7s} {verdict.task_id:30s} {verdict.steps:4d} steps  {verdict.seconds:5.1f} s  "
              f"{verdict.detail}  [privileged driver]", flush=True)
        if verdict.solved and write_reference:
            _write_reference(paths[verdict.task_id], verdict.success_step or verdict.steps)

    verdicts = drive_tasks(backend, [task for _, task in tasks], profile_path, on_verdict=say)
    return sum(not v.solved for v in verdicts)


def _write_reference(path: Path, steps: int) -> None:
    text = path.read_text()
    line = f"reference_steps: {steps}"
    text = re.sub(r"(?m)^reference_steps: \d+$", line, text) if "reference_steps:" in text else text + line + "\n"
    path.write_text(text)

