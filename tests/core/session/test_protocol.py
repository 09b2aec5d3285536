"""The paper protocol runs exactly the published suite, says what it leaves out, and --dry-run shows the plan."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from core.evaluation.tasks import check_suite, read_suite_manifest, task_files
from core.paths import PROJECT_ROOT, TASKS_DIR
from core.session.protocol import ProtocolError, suite_ids


def test_the_shipped_suite_matches_its_manifest():
    check = check_suite()
    assert check.intact, f"changed: {check.changed}, missing: {check.missing} (python main.py tasks suite --write)"
    assert len(check.suite) == 30 and check.others == ()
    assert sorted(read_suite_manifest()) == sorted(p.stem for p in task_files(TASKS_DIR))


def test_a_changed_suite_task_is_refused_and_other_tasks_are_named(tmp_path):
    folder = tmp_path / "tasks"
    shutil.copytree(TASKS_DIR, folder)
    manifest = folder / "_suite.yaml"
    (folder / "my_own_walk.yaml").write_text((folder / "q01_bread_mixed.yaml").read_text()
                                             .replace("q01_bread_mixed", "my_own_walk"))
    ids, note = suite_ids(folder)
    assert len(ids) == 30 and "my_own_walk" not in ids
    assert "1 other task file(s)" in note and "my_own_walk" in note
    edited = folder / "q04_clock_mixed.yaml"
    edited.write_text(edited.read_text().replace("step_budget:", "step_budget: 9999 #"))
    with pytest.raises(ProtocolError, match="q04_clock_mixed was changed"):
        suite_ids(folder)
    assert check_suite(folder, manifest).changed == ("q04_clock_mixed",)


def test_dry_run_prints_every_episode_with_its_seed_and_starts_nothing(tmp_path):
    out = tmp_path / "never"
    done = subprocess.run([sys.executable, "main.py", "run", "--protocol", "paper", "--dry-run", "--out", str(out)],
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("--protocol paper: the 30 suite tasks x 3 granularities x 5 trials")
    plan = [line.split() for line in lines[2:-1]]
    assert len(plan) == 450 and len({row[4] for row in plan}) == 450  # a seed of its own for every episode
    assert {row[1] for row in plan} == {"visual_guided", "step_guided", "goal_only"}
    assert lines[-1].startswith("450 episode(s): 30 task(s) x 15 each") and "nothing was started" in lines[-1]
    assert not out.exists()
    refused = subprocess.run([sys.executable, "main.py", "run", "--protocol", "paper", "--trials", "1", "--out",
                              str(out)], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and "leave out --trials" in refused.stderr and not out.exists()


def test_a_dry_run_needs_no_out_folder_and_a_real_run_does(tmp_path):
    plan = _run_in(tmp_path, "--protocol", "paper", "--dry-run")
    assert plan.returncode == 0, plan.stderr
    assert plan.stdout.splitlines()[-1].startswith("450 episode(s)")
    real = _run_in(tmp_path, "--tasks", "q01_bread_navigation")
    assert real.returncode == 2 and "--out FOLDER is required" in real.stderr
    assert list(tmp_path.iterdir()) == []  # nothing written where it was run


def _run_in(folder, *args: str) -> subprocess.CompletedProcess[str]:
    """`python main.py run ARGS` started from another folder, as a user would."""
    return subprocess.run([sys.executable, str(PROJECT_ROOT / "main.py"), "run", *args], cwd=folder,
                          env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}, capture_output=True, text=True,
                          timeout=120)
