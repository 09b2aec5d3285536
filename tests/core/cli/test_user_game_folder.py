"""A user's game lives in the user's folder: a task names its backend by a path relative to itself, or by a
name found in POKEGYM_HOME/backends; `tasks validate` takes --tasks and --backend and says what was given."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from core.paths import PROJECT_ROOT
from tests.user_games import TASK, user_game


def _game(folder: Path, name: str = "mine", task_backend: str = "../mine.yaml") -> Path:
    return user_game(folder, name, task_backend)


def _tasks(*arguments: str, home: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **({"POKEGYM_HOME": str(home)} if home else {})}
    return subprocess.run([sys.executable, "main.py", "tasks", "validate", *arguments], cwd=PROJECT_ROOT,
                          capture_output=True, text=True, timeout=300, env=env)


def test_all_tasks_of_a_backend_file_are_found_beside_it_and_driven(tmp_path):
    backend = _game(tmp_path / "game")
    done = _tasks("--all", "--backend", str(backend))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"ok      {tmp_path / 'game' / 'tasks' / TASK}.yaml" in done.stdout
    assert "1 of 1 task(s) passed" in done.stdout


def test_tasks_from_a_folder_are_checked_against_the_backend_they_name_by_path(tmp_path):
    _game(tmp_path / "game")
    done = _tasks("--tasks", str(tmp_path / "game" / "tasks"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 of 1 task file(s) valid" in done.stdout


def test_a_task_for_another_backend_than_the_one_given_is_named_so(tmp_path):
    _game(tmp_path / "game")
    task = tmp_path / "game" / "tasks" / f"{TASK}.yaml"
    done = _tasks(str(task), "--backend", "minetest")
    assert done.returncode == 1
    assert f"the task is for backend '{tmp_path / 'game' / 'mine.yaml'}', but --backend minetest was given" \
        in done.stdout


def test_all_with_no_tasks_says_where_it_looked_not_to_use_all(tmp_path):
    backend = _game(tmp_path / "empty")
    (tmp_path / "empty" / "tasks" / f"{TASK}.yaml").unlink()
    done = _tasks("--all", "--backend", str(backend))
    assert done.returncode == 2
    assert done.stderr.strip() == (f"error: no task files in {tmp_path / 'empty' / 'tasks'}; name task files, or "
                                   "give --tasks PATH|DIR")


def test_a_backend_in_the_users_folder_is_found_by_name(tmp_path):
    home = tmp_path / "home"
    _game(home / "backends", name="users_game", task_backend="users_game")
    done = _tasks("--tasks", str(home / "backends" / "tasks"), "--backend", "users_game", home=home)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 of 1 task file(s) valid" in done.stdout
