"""Unjudged episodes in the studio (pytest-qt, offscreen): free play recorded by `run` on a backend with
`memory_profile: none` opens in Replay with its frames and actions and a note instead of a trajectory, and
the Results view counts it apart, never as a failure."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")


from core.paths import PROJECT_ROOT
from studio.results_view import ResultsView
from tests.user_games import user_game


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("unjudged")
    backend = user_game(folder / "game", memory_profile="none")
    out = folder / "run"
    done = subprocess.run([sys.executable, "main.py", "run", "--backend", str(backend), "--agent", "random",
                           "--steps", "5", "--trials", "2", "--out", str(out)], cwd=PROJECT_ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return out


@pytest.fixture
def window(replay_window):
    return replay_window


def test_replay_opens_an_unjudged_episode_with_a_note_instead_of_a_trajectory(window, qtbot, run_folder):
    row = json.loads((run_folder / "results.jsonl").read_text().splitlines()[0])
    replay = window.replay
    with qtbot.waitSignal(replay.sig_opened, timeout=20_000):  # emitted once the map's turn has come
        window.open_path(str(run_folder / row["episode"]))
    qtbot.waitUntil(lambda: replay.shown_index == 0, timeout=10_000)
    assert replay.timeline.count == 5
    assert replay.frame_view.current is not None and replay.frame_view.current.any()  # the game's frame
    assert "Step" in replay.details.toPlainText()  # the step's action, as recorded
    assert replay.trajectory.note.isVisible() and "unjudged (no memory profile)" in replay.trajectory.note.text()
    assert replay.trajectory.points == 0
    assert replay.metrics.labels["success"].text() == "Success: unjudged"
    assert replay.metrics.labels["ims"].text() == "IMs – (no positions)"  # unknown, not 0
    replay.seek(4)
    qtbot.waitUntil(lambda: replay.shown_index == 4, timeout=10_000)
    assert replay.metrics.labels["step"].text().startswith("Step 5 /")


def test_results_count_unjudged_episodes_apart(qtbot, run_folder):
    view = ResultsView()
    qtbot.addWidget(view)
    view.show()
    with qtbot.waitSignal(view.sig_loaded, timeout=30_000):
        view.open_folder(run_folder)
    assert "2 unjudged (no memory profile)" in view.summary.text()
    assert "0 episodes" in view.summary.text()  # in no table: neither successes nor failures
    assert view.banner.level == "info" and "unjudged" in view.banner.text()
    view.close()
