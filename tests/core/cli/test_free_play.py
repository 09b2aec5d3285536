"""`run` on a backend with `memory_profile: none` (a new game before the memory finder has made its profile):
free play, recorded as unjudged episodes (frames and actions, no positions, no success), which `report` counts
apart. What needs ground truth still refuses, naming the finder's command. Real commands, real worlds."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import h5py
import pytest

from core.episode.load import load_episode
from core.paths import PROJECT_ROOT
from core.recording.reader import EpisodeReader
from tests.user_games import user_game


def _main(*arguments: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "main.py", *arguments], cwd=PROJECT_ROOT, capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ))


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> tuple[Path, Path, subprocess.CompletedProcess[str]]:
    """The backend file, and a run folder of 2 unjudged free-play episodes of 5 steps on it."""
    folder = tmp_path_factory.mktemp("free")
    backend = user_game(folder / "game", memory_profile="none")
    backend.write_text(backend.read_text().replace("audio: off", "audio: on"))  # the game's sound is recorded too
    out = folder / "run"
    done = _main("run", "--backend", str(backend), "--agent", "random", "--steps", "5", "--trials", "2",
                 "--out", str(out))
    return backend, out, done


def _rows(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def test_random_free_play_records_unjudged_results(played):
    _, out, done = played
    assert done.returncode == 0, done.stdout + done.stderr
    assert "unjudged" in done.stdout and "no memory profile" in done.stdout
    rows = _rows(out)
    assert len(rows) == 2 and len({r["key"] for r in rows}) == 2 and len({r["seed"] for r in rows}) == 2
    for row in rows:
        assert row["success"] is None and row["end_reason"] == "unjudged" and row["unjudged"] == "no memory profile"
        assert row["steps_used"] == 5 and row["task_id"] == "free_play_plaza"  # the world's first start state
        metrics = row["metrics"]
        # nothing read positions: unknown, never 0 ineffective moves
        for name in ("ineffective_moves", "im_rate", "max_consecutive_im", "deadlocks", "recovery_rate"):
            assert metrics[name] is None, name
        assert metrics["agent_steps"] == 5 and metrics["success"] is None
        assert (out / row["episode"]).is_file()


def test_the_recording_holds_frames_and_actions_and_says_it_is_unjudged(played):
    _, out, _ = played
    path = out / _rows(out)[0]["episode"]
    with h5py.File(path, "r") as plain:
        assert "samples" not in plain  # no evaluator samples: no positions at all
        assert not plain.attrs["judged"] and plain.attrs["unjudged"] == "no memory profile"
        assert plain["images/current"].shape[0] == 5 and plain["images/current"][0].any()
    with EpisodeReader(path) as reader:
        assert not reader.judged and len(reader.sample_table()) == 0
        assert reader.result is not None and reader.result["end_reason"] == "unjudged"
    episode = load_episode(path)
    assert not episode.judged and episode.unjudged_reason == "no memory profile" and len(episode) == 5
    assert all(step.position_after is None and math.isnan(step.displacement) for step in episode)
    assert all(step.action and step.macro for step in episode)  # what the agent did is all there
    assert episode.audio_state == "on" and all(episode.step_audio(i) is not None for i in range(5))
    assert episode.result is not None and episode.result.success is None


def test_report_counts_unjudged_episodes_apart(played):
    _, out, _ = played
    done = _main("report", str(out))
    assert done.returncode == 0, done.stderr
    assert "2 unjudged (no memory profile)" in done.stdout
    # no empty tables: what to do to get some instead
    assert "## Success rate" not in done.stdout and "memory signature --backend FILE" in done.stdout
    assert not (out / "im_vs_sr.png").exists() and "im_vs_sr.png" not in done.stdout
    numbers = json.loads(_main("report", str(out), "--json").stdout)
    assert numbers["episodes"] == 0 and numbers["sr"] == [] and numbers["unjudged"]["episodes"] == 2
    assert numbers["failures"] == []  # never counted as failures


def test_a_rerun_resumes_instead_of_playing_again(played):
    backend, out, _ = played
    again = _main("run", "--backend", str(backend), "--agent", "random", "--steps", "5", "--trials", "2",
                  "--out", str(out))
    assert again.returncode == 0 and "0 episode(s) run" in again.stdout
    assert len(_rows(out)) == 2


def test_the_plan_names_the_start_and_what_needs_ground_truth_refuses_in_one_line(played):
    backend, _, _ = played
    plan = _main("run", "--backend", str(backend), "--start", "south_gate", "--steps", "7", "--trials", "3",
                 "--dry-run")
    assert plan.returncode == 0, plan.stderr
    assert "free_play_south_gate__goal_only__random__t2" in plan.stdout and "3 unjudged episode(s)" in plan.stdout
    for refused, words in ((("--tasks", "all"), "memory signature --backend"),
                           (("--intervention", "physical"), "memory signature --backend"),
                           (("--start", "nowhere"), "unknown start state 'nowhere'"),
                           (("--granularity", "all"), "free play has none")):
        done = _main("run", "--backend", str(backend), *refused, "--dry-run")
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and len(lines) == 1 and words in lines[0], (refused, done.stderr)
    calibrate = _main("backend", "calibrate", str(backend))  # measures moves by position
    lines = calibrate.stderr.strip().splitlines()
    assert calibrate.returncode == 2 and len(lines) == 1 and "memory signature --backend" in lines[0]
    judged = _main("run", "--start", "south_gate", "--dry-run")  # the built-in world has a profile: tasks decide
    assert judged.returncode == 2 and "--start chooses where free play starts" in judged.stderr


def test_a_clip_exports_and_a_dataset_leaves_unjudged_episodes_out_saying_why(played, tmp_path):
    _, out, _ = played
    episode = out / _rows(out)[0]["episode"]
    clip = _main("export", "clip", str(episode), "--steps", "1-5", "--out", str(tmp_path / "clip.gif"))
    assert clip.returncode == 0, clip.stderr
    assert (tmp_path / "clip.gif").stat().st_size > 0
    dataset = _main("export", "dataset", str(out), "--format", "minari", "--out", str(tmp_path / "data"))
    assert dataset.returncode != 0 and "unjudged (no memory profile): it recorded no positions" in dataset.stderr
