"""`run` and `tasks try` on a game of the user's own: a backend file outside the project, its tasks in the tasks/
folder beside it or named by --tasks, its memory profile named by --profile (the backend file itself says
`memory_profile: none`, as a new game's does before the finder has made one). Real commands, real worlds."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from core.paths import PROJECT_ROOT
from tests.user_games import TASK, found_profile, user_game


def _main(*arguments: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "main.py", *arguments], cwd=PROJECT_ROOT, capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ))


def test_run_plays_the_tasks_beside_a_backend_file_read_through_the_profile_given(tmp_path):
    backend = user_game(tmp_path / "game", memory_profile="none")
    profile = found_profile(tmp_path / "game")
    out = tmp_path / "run"
    done = _main("run", "--backend", str(backend), "--profile", str(profile), "--agent", "random", "--budget", "2",
                 "--out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    (row,) = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    # judged through --profile in the episode's own worker, which loaded the same backend file
    assert row["task_id"] == TASK and row["end_reason"] == "budget" and row["steps_used"] == 2
    assert (out / row["episode"]).is_file()


def test_run_takes_the_backend_the_tasks_name_and_says_what_it_would_run(tmp_path):
    user_game(tmp_path / "game")
    done = _main("run", "--tasks", str(tmp_path / "game" / "tasks"), "--dry-run")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{TASK}__goal_only__random__t0" in done.stdout and "1 episode(s)" in done.stdout


def test_run_says_what_was_given_and_where_it_looked(tmp_path):
    backend = user_game(tmp_path / "game")
    missing = _main("run", "--tasks", str(tmp_path / "nowhere"), "--dry-run")
    assert missing.returncode == 2 and missing.stderr.strip() == f"error: --tasks {tmp_path / 'nowhere'}: no such " \
                                                                  "file or folder"
    other = _main("run", "--tasks", str(tmp_path / "game" / "tasks"), "--backend", "minetest", "--dry-run")
    assert other.returncode == 2
    assert f"the task is for backend '{backend}', but this run's backend is minetest" in other.stderr
    unmatched = _main("run", "--backend", str(backend), "--tasks", "q01*", "--dry-run")
    assert unmatched.returncode == 2
    assert f"no task matches 'q01*' among the 1 task(s) in {tmp_path / 'game' / 'tasks'}" in unmatched.stderr
    (tmp_path / "game" / "tasks" / f"{TASK}.yaml").unlink()
    empty = _main("run", "--backend", str(backend), "--dry-run")
    assert empty.returncode == 2
    assert f"no tasks for the mine backend ({backend}): looked in {tmp_path / 'game' / 'tasks'}" in empty.stderr
    no_profile = _main("run", "--backend", str(backend), "--profile", str(tmp_path / "found.yaml"), "--dry-run")
    assert no_profile.returncode == 2
    assert f"the memory profile {tmp_path / 'found.yaml'} given for the mine backend does not exist" \
        in no_profile.stderr


def test_tasks_try_drives_a_folder_of_tasks_on_their_backend_with_the_profile_given(tmp_path):
    user_game(tmp_path / "game", memory_profile="none")
    profile = found_profile(tmp_path / "game")
    refused = _main("tasks", "try", "--tasks", str(tmp_path / "game" / "tasks"))
    assert refused.returncode == 2 and "has no memory profile yet" in refused.stderr  # nothing to judge with
    tried = _main("tasks", "try", "--tasks", str(tmp_path / "game" / "tasks"), "--profile", str(profile))
    assert tried.returncode == 0, tried.stdout + tried.stderr
    assert tried.stdout.startswith(f"SOLVED  {TASK}")
