"""Where a run's tasks come from: the backend's own task folder, or task files and folders the user names.

A shipped backend's tasks live in the project (assets/tasks/, assets/tasks/BACKEND/); a backend file of the
user's own keeps them in the `tasks/` folder beside it. `--tasks` may also name files or folders anywhere
(a part that holds a `/`, ends in `.yaml` or is a folder): they replace that folder, and the other parts of
the selector (ids, globs, quests, category:NAME) choose among them. Every task must be for the backend that
runs it: a task names its backend by name or by a path relative to itself, and both are compared as files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import yaml

from core.backends.profile import BACKENDS_DIR, BackendFileError, BackendProfile, backend_path, is_backend_path
from core.evaluation.tasks import Task, load_task, suite_folder, task_files


class TaskSourceError(ValueError):
    """Task files that cannot be run on this backend; the message says what was given and where it looked."""


def is_shipped(backend: BackendProfile) -> bool:
    """Whether the backend is one of the project's own (assets/backends/NAME.yaml, the same on every machine)."""
    shipped = BACKENDS_DIR / f"{backend.name}.yaml"
    return shipped.exists() and shipped.resolve() == backend.path.resolve()


def task_folder(backend: BackendProfile) -> Path:
    """Where a backend's own tasks live: its suite folder in assets/tasks/ when it is shipped, else the
    `tasks/` folder beside its file."""
    return suite_folder(backend.name) if is_shipped(backend) else backend.directory / "tasks"


def is_task_path(part: str) -> bool:
    """Whether one part of a --tasks selector names task files (a path) rather than choosing tasks by id."""
    return "/" in part or "\\" in part or part.endswith((".yaml", ".yml")) or Path(part).expanduser().is_dir()


def split_selector(selector: str) -> tuple[list[Path], str]:
    """The paths a --tasks selector names, and the rest of it (ids, globs, quests, category:NAME; "all" when
    only paths were given)."""
    parts = [p.strip() for p in selector.split(",") if p.strip()]
    paths = [Path(p).expanduser() for p in parts if is_task_path(p)]
    rest = [p for p in parts if not is_task_path(p)]
    return paths, ",".join(rest) or "all"


def given_task_files(paths: list[Path]) -> list[Path]:
    """Task files named by --tasks: files as given, folders as the task files in them. TaskSourceError for a
    path that does not exist or a folder with no task files, naming it."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            inside = task_files(path)
            if not inside:
                raise TaskSourceError(f"--tasks {path}: the folder holds no task files (*.yaml)")
            found += inside
        elif path.is_file():
            found.append(path)
        else:
            raise TaskSourceError(f"--tasks {path}: no such file or folder")
    return found


def named_backend(path: Path) -> str:
    """The backend a task file names (builtin when it names none), read before full validation: a name, or the
    absolute path of a backend file the task gives relative to itself."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return "builtin"  # load_task reports the real problem with its line
    name: object = cast("dict[str, Any]", data).get("backend", "builtin") if isinstance(data, dict) else "builtin"
    if not isinstance(name, str):
        return "builtin"
    return str((path.parent / name).expanduser().resolve()) if is_backend_path(name) else name


def backend_file(name_or_path: str) -> Path | None:
    """The file a backend name or path stands for (None when no such backend exists)."""
    try:
        return backend_path(name_or_path).resolve()
    except BackendFileError:
        return None


def same_backend(one: str, other: str) -> bool:
    """Whether two backend names or paths are the same file."""
    first, second = backend_file(one), backend_file(other)
    return first == second if first is not None and second is not None else one == other


def load_tasks_for(backend: BackendProfile, paths: list[Path], flags: list[str]) -> list[Task]:
    """The task files at `paths`, each checked against `backend` (its flags and start states) and refused when it
    names another backend, naming both."""
    tasks: list[Task] = []
    for path in paths:
        named = named_backend(path)
        if not same_backend(named, str(backend.path)):
            raise TaskSourceError(f"{path}: the task is for backend {named!r}, but this run's backend is "
                                  f"{backend.name} ({backend.path})")
        tasks.append(load_task(path, flags, backend.start_states))
    return tasks


def own_tasks(backend: BackendProfile, flags: list[str]) -> tuple[list[Task], Path]:
    """The backend's own tasks (task_folder) and that folder; none when it does not exist."""
    folder = task_folder(backend)
    return (load_tasks_for(backend, task_files(folder), flags) if folder.is_dir() else []), folder


def backend_of_tasks(paths: list[Path]) -> str | None:
    """The one backend the task files at `paths` name (a name, or a backend file's absolute path); None when
    there are none. TaskSourceError when they name different backends, naming them."""
    named = {named_backend(path) for path in given_task_files(paths)}
    if len({backend_file(name) or name for name in named}) > 1:
        raise TaskSourceError(f"the tasks in {', '.join(str(p) for p in paths)} are for different backends "
                              f"({', '.join(sorted(named))}); run each backend's tasks with its own --backend")
    return next(iter(named), None)
