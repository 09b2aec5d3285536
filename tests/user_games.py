"""A game of the user's own, in a folder outside the project: the built-in world under another backend name, its
tasks in the tasks/ folder beside the backend file, and (optionally) a memory profile there too."""

from __future__ import annotations

import shutil
from pathlib import Path

from core.paths import DEFAULT_WORLD, PROFILES_DIR, TASKS_DIR

TASK = "q08_site_navigation"


def user_game(folder: Path, name: str = "mine", task_backend: str = "../mine.yaml",
              memory_profile: str | None = None, tasks: tuple[str, ...] = (TASK,)) -> Path:
    """The backend file; `memory_profile` as its file writes it (default: the built-in world's, by its absolute
    path; "none" for a game with no profile yet)."""
    folder.mkdir(parents=True, exist_ok=True)
    backend = folder / f"{name}.yaml"
    profile = memory_profile or str(PROFILES_DIR / "builtin_world.yaml")
    backend.write_text(f"format_version: 1\nname: {name}\ntitle: Mine\nkind: builtin\nmemory_profile: {profile}\n"
                       f"builtin: {{world: {DEFAULT_WORLD}, renderer: software, mode: lockstep, audio: off}}\n")
    (folder / "tasks").mkdir(exist_ok=True)
    for task in tasks:
        text = (TASKS_DIR / f"{task}.yaml").read_text()
        (folder / "tasks" / f"{task}.yaml").write_text(text + f"backend: {task_backend}\n")
    return backend


def found_profile(folder: Path) -> Path:
    """A memory profile file of the user's (as the memory finder would write one): the built-in world's, copied."""
    target = folder / "found_profile.yaml"
    shutil.copyfile(PROFILES_DIR / "builtin_world.yaml", target)
    return target
