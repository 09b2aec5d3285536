"""Saving an authored task: validated as loading validates it, never over another file unasked, atomic.

The file is written to a temporary name in the same folder and then renamed into place, so a
crash mid-write leaves either the old file or none, never half a task. The temporary name does
not end in .yaml, so a suite loader never picks it up.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from core.authoring.context import profile_flags, world_start_states
from core.authoring.draft import TaskDraft
from core.evaluation.tasks import Task, TaskFileError, parse_task
from core.paths import user_tasks_dir


class TaskExistsError(TaskFileError):
    """Saving would replace an existing task file, and overwriting was not asked for."""


def save_task(draft_or_task: TaskDraft | Task, folder: Path | None = None, overwrite: bool = False) -> Path:
    """Write `<folder>/<id>.yaml` and return its path; by default into the user's task folder
    (core.paths.user_tasks_dir), never into the benchmark suite's assets/tasks/. Raises TaskFileError (with
    file and line) for an invalid task, TaskExistsError when the file exists and `overwrite` is false."""
    if isinstance(draft_or_task, Task):
        # A Task carries no profile or world, so it is checked against the built-in game's.
        _, starts = world_start_states()
        draft = TaskDraft.from_task(draft_or_task, profile_flags(), list(starts))
    else:
        draft = draft_or_task
    folder = Path(folder) if folder is not None else user_tasks_dir()
    path = folder / f"{draft.id or 'untitled'}.yaml"
    text = draft.to_yaml()
    parse_task(text, path, draft.flag_names, draft.start_states)  # exactly what loading it will check
    if path.exists() and not overwrite:
        raise TaskExistsError(f"{path} already exists: choose another id, or save with overwrite to replace it")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _write_atomically(path, text, overwrite)
    except FileExistsError:  # created by someone else since the check above
        raise TaskExistsError(f"{path} already exists: choose another id, or save with overwrite to replace it") \
            from None
    except OSError as exc:
        raise TaskFileError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path


def _umask() -> int:
    """The process umask, read without setting it (os.umask would change it for every thread meanwhile)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass  # not Linux: the usual default
    return 0o022


def _write_atomically(path: Path, text: str, overwrite: bool) -> None:
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
    if hasattr(os, "fchmod"):
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes it private (0600); a task file is an ordinary file
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if overwrite:
            os.replace(temporary, path)
        else:
            # A hard link publishes the finished file under its name only if that name is still free.
            try:
                os.link(temporary, path)
            except FileExistsError:
                raise
            except OSError:  # no hard links on this file system (FAT, some shares): the caller's check stands
                os.replace(temporary, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
