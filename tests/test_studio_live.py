"""The live window (pytest-qt, offscreen): it builds, runs an episode and shows it everywhere."""

from __future__ import annotations

import threading

import pytest

pytest.importorskip("pytestqt")

from core.recording.reader import EpisodeReader
from studio.live_session import LiveSession
from studio.main_window import MainWindow


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    monkeypatch.setattr("studio.live_session.RECORDINGS_DIR", tmp_path)
    from PySide6.QtCore import QSettings

    QSettings.setPath(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, str(tmp_path / "settings"))
    session = LiveSession()
    main = MainWindow(session)
    main.setProperty("quiet", True)
    qtbot.addWidget(main)
    main.show()
    session.connect_world()
    qtbot.waitUntil(lambda: session.evaluator is not None and "Connected" in main.status.text(), timeout=60_000)
    yield main
    main.close()


def test_a_random_episode_updates_every_panel(window, qtbot, tmp_path):
    ends = []
    window.session.sig_episode_end.connect(ends.append)
    window.session.start_episode("q08_site_navigation", "goal_only", "random", budget=6)
    qtbot.waitUntil(lambda: bool(ends), timeout=60_000)
    qtbot.waitUntil(lambda: window.trajectory.points > 0 and window.reasoning.count == 6, timeout=10_000)
    assert window.frame_view.frames_shown > 0 and window.frame_view.current.shape == (360, 640, 3)
    assert window.metrics.labels["step"].text() == "Step 6 / 6"
    assert "Episode ended (budget) after 6 steps" in window.status.text()
    recordings = list(tmp_path.glob("*.h5"))
    assert len(recordings) == 1
    with EpisodeReader(recordings[0]) as episode:
        assert episode.step_count == 6 and episode.complete


def test_no_threads_are_left_behind(window, qtbot):
    ends = []
    window.session.sig_episode_end.connect(ends.append)
    window.session.start_episode("q08_site_navigation", "goal_only", "random", budget=2)
    qtbot.waitUntil(lambda: bool(ends), timeout=60_000)
    window.close()
    names = [t.name for t in threading.enumerate() if t.name.startswith("studio-")]
    assert names == []


def test_taking_control_sends_pad_input_that_is_recorded(window, qtbot, tmp_path):
    from PySide6.QtCore import Qt

    ends, steps = [], []
    window.session.sig_episode_end.connect(ends.append)
    window.session.sig_step.connect(steps.append)
    window.session.start_episode("q08_site_navigation", "goal_only", "random", budget=4)
    window.toggle_control()
    assert window.actions_by_name["Take control"].text() == "Hand back"
    qtbot.keyClick(window, Qt.Key.Key_W)
    qtbot.keyClick(window, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: len(steps) >= 2, timeout=30_000)
    window.toggle_control()  # hand back: the agent finishes the episode
    window.actions_by_name["Push back"].trigger()
    qtbot.waitUntil(lambda: bool(ends), timeout=60_000)
    path = next(tmp_path.glob("*.h5"))
    with EpisodeReader(path) as episode:
        records = episode.records()
    assert [r["source"] for r in records[:2]] == ["human", "human"]
    assert records[0]["macro"][0][0]["left_y"] == 1.0 and records[1]["macro"][0][0]["buttons"] == ["A"]
    assert any(r["intervention"] and r["intervention"]["kind"] == "push_back" for r in records)


def test_a_dead_world_is_reported_the_recording_kept_and_a_restart_works(window, qtbot, tmp_path):
    import os
    import signal

    ends, steps = [], []
    window.session.sig_episode_end.connect(ends.append)
    window.session.sig_step.connect(steps.append)
    window.session.start_episode("q08_site_navigation", "goal_only", "random", budget=200)
    qtbot.waitUntil(lambda: len(steps) >= 3, timeout=30_000)
    os.kill(window.session.world.pid, signal.SIGKILL)
    qtbot.waitUntil(lambda: bool(ends), timeout=30_000)
    assert ends[0]["end_reason"] == "error"
    assert "world process" in window.status.text() and "Restart world" in window.status.text()
    with EpisodeReader(next(tmp_path.glob("*.h5"))) as episode:
        assert episode.step_count >= 3 and episode.result["end_reason"] == "error"
    window.restart_world()
    qtbot.waitUntil(lambda: "Connected" in window.status.text(), timeout=60_000)
    assert window.session.world.latest_frame().pixels.shape == (360, 640, 3)
