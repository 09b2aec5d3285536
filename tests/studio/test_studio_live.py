"""The live window (pytest-qt, offscreen): it builds, runs an episode and shows it everywhere."""

from __future__ import annotations

import os
import signal

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QInputDialog

from core.recording.reader import EpisodeReader
from studio.live_controls import LiveChoices
from studio.live_session import LiveSession
from studio.main_window import MainWindow
from tests.conftest import StepsSoFar, run_episode_to_end


@pytest.fixture
def window(live_window):
    return live_window


def run_to_end(window, qtbot, choices: LiveChoices) -> dict:
    return run_episode_to_end(window.session, qtbot, choices)


def test_a_random_episode_updates_every_panel(window, qtbot, settings_dir):
    live = window.live
    assert live.trajectory.backdrop_shapes > 10  # building footprints behind the path
    choices = LiveChoices("q08_site_navigation", budget=6, previous_frame=True, side_views=True)
    run_to_end(window, qtbot, choices)
    qtbot.waitUntil(lambda: live.trajectory.points > 0 and live.reasoning.count == 6, timeout=10_000)
    assert live.frame_view.frames_shown > 0 and live.frame_view.current.shape == (360, 640, 3)
    assert live.metrics.labels["step"].text() == "Step 6 / 6"  # the episode's count stays in the metrics bar...
    qtbot.waitUntil(lambda: live.frame_view.overlay_text("top_right") == "", timeout=2_000)  # ...not on the live game
    assert live.frame_view.overlay_text("top_left").startswith("pad:")
    assert set(live.observations.shown_kinds()) == {"previous", "left", "right"}
    assert "Episode failed after 6 steps: the step budget was used up" in live.status.full_text()
    live.status.resize(160, live.status.height())  # a narrow status bar keeps the message's start, marked cut
    assert live.status.text().startswith("Episode fail") and live.status.text().endswith("…")
    assert live.status.toolTip() == live.status.full_text()
    assert live.metrics.labels["success"].text() == "Success: failed"
    recordings = list(settings_dir.glob("*.h5"))
    assert len(recordings) == 1 and str(recordings[0]) in live.recording.label.full_text()
    assert live.recording.open_button.isEnabled()
    with EpisodeReader(recordings[0]) as episode:
        assert episode.step_count == 6 and episode.complete
        assert set(episode.image_sets()) >= {"current", "previous", "left", "right"}
        assert len(episode.metadata["map_outline"]) > 10
    with qtbot.waitSignal(window.replay.sig_opened, timeout=20_000):
        live.recording.open_button.click()  # "Open in replay"
    assert window.tabs.currentWidget() is window.replay
    assert len(window.replay.episode) == 6 and window.replay.trajectory.backdrop_shapes > 10


def test_model_agents_are_offered_only_when_their_key_is_set(qtbot, settings_dir, monkeypatch):
    from studio.live_controls import LiveControls

    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    without = LiveControls(["t"])
    qtbot.addWidget(without)
    assert [without.agent.itemText(i) for i in range(without.agent.count())] == ["random", "random+listen"]
    assert "ANTHROPIC_API_KEY" in without.agent.toolTip()
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    with_key = LiveControls(["t"])
    qtbot.addWidget(with_key)
    assert "model:claude-sonnet-4.6" in [with_key.agent.itemText(i) for i in range(with_key.agent.count())]


def test_choices_and_layout_survive_a_restart(qtbot, settings_dir):
    first = MainWindow(LiveSession())
    qtbot.addWidget(first)
    first.live.controls.task.setCurrentText("q03_pier_navigation")
    first.live.controls.granularity.setCurrentText("Step-guided")
    first.live.controls.side_views.setChecked(True)
    first.live.controls.budget.setValue(42)
    first.close()
    second = MainWindow(LiveSession())
    qtbot.addWidget(second)
    choices = second.live.controls.choices()
    second.close()
    assert (choices.task_id, choices.granularity, choices.side_views, choices.budget) == \
        ("q03_pier_navigation", "step_guided", True, 42)


def test_help_lists_every_shortcut(window):
    rows = dict(window.shortcut_rows())
    for name, action in window.live.actions_by_name.items():
        if name != "Overlays":
            assert action.shortcut().toString() in rows
    assert "W A S D" in rows and "Space or E" in rows


def test_taking_control_sends_pad_input_that_is_recorded(window, qtbot, settings_dir):
    live = window.live
    ends = []
    window.session.sig_episode_end.connect(ends.append)
    steps = StepsSoFar(window.session)
    window.session.start_episode(LiveChoices("q08_site_navigation", budget=4))
    live.toggle_control()
    assert live.actions_by_name["Take control"].text() == "Hand back"
    qtbot.keyClick(live, Qt.Key.Key_W)
    qtbot.keyClick(live, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: len(steps) >= 2, timeout=30_000)
    live.toggle_control()  # hand back: the agent finishes the episode
    live.actions_by_name["Push back"].trigger()
    qtbot.waitUntil(lambda: bool(ends), timeout=60_000)
    with EpisodeReader(next(settings_dir.glob("*.h5"))) as episode:
        records = episode.records()
    assert [r["source"] for r in records[:2]] == ["human", "human"]
    assert records[0]["macro"][0][0]["left_y"] == 1.0 and records[1]["macro"][0][0]["buttons"] == ["A"]
    # On failure: each step's source and intervention, and what the episode reported as never carried out.
    said = ([(r["source"], r["intervention"] and r["intervention"]["kind"]) for r in records],
            ends[0].result.end_reason, ends[0].result.undelivered_interventions)
    assert any(r["intervention"] and r["intervention"]["kind"] == "push_back" for r in records), said
    assert ("human" in {kind for _, kind in live.trajectory.marks()}
            and "push_back" in {kind for _, kind in live.trajectory.marks()})


def test_a_hint_typed_into_the_dialog_reaches_the_recording(window, qtbot, settings_dir):
    live = window.live
    ends = []
    window.session.sig_episode_end.connect(ends.append)
    window.session.start_episode(LiveChoices("q08_site_navigation", budget=5))
    live.actions_by_name["Pause"].trigger()  # the hint must arrive while steps remain

    def answer_dialog() -> None:
        dialog = QApplication.activeModalWidget()
        assert isinstance(dialog, QInputDialog)
        dialog.setTextValue("the site is east of the shops")
        dialog.accept()

    QTimer.singleShot(0, answer_dialog)
    live.actions_by_name["Send hint…"].trigger()  # opens the real modal dialog
    live.actions_by_name["Resume"].trigger()
    qtbot.waitUntil(lambda: bool(ends), timeout=60_000)
    with EpisodeReader(next(settings_dir.glob("*.h5"))) as episode:
        hints = [r["intervention"] for r in episode.records() if r["intervention"]]
    assert hints and hints[0]["kind"] == "text" and hints[0]["source"] == "human"
    assert hints[0]["params"]["hint"] == "the site is east of the shops"


def test_driving_between_episodes_moves_the_character(window, qtbot):
    before = window.session.host.latest_sample()
    window.live.toggle_control()
    for _ in range(3):
        qtbot.keyClick(window.live, Qt.Key.Key_W)

    def moved() -> float:
        now = window.session.host.latest_sample()
        return abs(now.x - before.x) + abs(now.y - before.y)

    qtbot.waitUntil(lambda: moved() > 0.5, timeout=20_000)
    window.live.toggle_control()


def test_a_dead_world_is_reported_the_recording_kept_and_a_restart_works(window, qtbot, settings_dir):
    live = window.live
    ends = []
    window.session.sig_episode_end.connect(ends.append)
    steps = StepsSoFar(window.session)
    window.session.start_episode(LiveChoices("q08_site_navigation", budget=200))
    qtbot.waitUntil(lambda: len(steps) >= 3, timeout=30_000)
    os.kill(window.session.host.world.pid, signal.SIGKILL)
    qtbot.waitUntil(lambda: bool(ends), timeout=30_000)
    assert ends[0].result.end_reason == "error"
    assert "world process" in live.status.full_text() and "Restart world" in live.status.full_text()
    with EpisodeReader(next(settings_dir.glob("*.h5"))) as episode:
        assert episode.step_count >= 3 and episode.result["end_reason"] == "error"
    live.restart_world()
    qtbot.waitUntil(lambda: "Connected" in live.status.full_text(), timeout=60_000)
    assert window.session.host.world.latest_frame().pixels.shape == (360, 640, 3)


def test_clicking_a_step_shows_what_the_agent_saw_and_the_timeline_follows(window, qtbot):
    live = window.live
    run_to_end(window, qtbot, LiveChoices("q08_site_navigation", budget=5))
    qtbot.waitUntil(lambda: live.reasoning.count == 5 and live.timeline.timeline.count == 5, timeout=10_000)
    live.reasoning.list.setCurrentRow(2)  # step 3
    assert live.frame_view.current.shape == (180, 320, 3)  # the stored half-size frame of step 3
    assert "step 3" in live.status.full_text() and live.timeline.timeline.cursor_index == 2
    qtbot.wait(100)  # live frames keep arriving meanwhile; the past step must stay on screen
    assert live.frame_view.current.shape == (180, 320, 3)
    live.actions_by_name["Back to live"].trigger()
    qtbot.waitUntil(lambda: live.frame_view.current.shape == (360, 640, 3), timeout=5_000)


def test_the_task_list_shows_every_task_and_choosing_one_selects_it(window, qtbot):
    live = window.live
    assert sorted(live.tasks.task_ids) == sorted(t.id for t in window.session.host.tasks)
    assert len(live.tasks.task_ids) >= 30
    row = live.tasks.task_ids.index("q03_pier_navigation")
    live.tasks.table.selectRow(row)
    assert live.controls.task.currentText() == "q03_pier_navigation"
    goal_xs, _ = live.trajectory._goal.getData()
    task = window.session.host.task("q03_pier_navigation")
    assert abs(float(goal_xs.mean()) - task.success.reach.x) < 0.5


def test_a_physical_gamepad_drives_the_character_as_recorded_human_steps(window, qtbot, settings_dir, tmp_path):
    import os
    import struct

    if not hasattr(os, "mkfifo"):
        pytest.skip("the joystick stand-in is a POSIX FIFO")
    devices = tmp_path / "input"
    devices.mkdir()
    os.mkfifo(devices / "js0")  # stands in for /dev/input/js0: real js_event bytes go through it
    live = window.live
    live.driver.device_dir = devices
    steps = StepsSoFar(window.session)
    window.session.start_episode(LiveChoices("q08_site_navigation", budget=40))
    live.toggle_control()  # opens the gamepad (the reading end of the FIFO)
    assert live.driver.gamepad_active
    writer = os.open(devices / "js0", os.O_WRONLY)
    try:
        os.write(writer, struct.pack("=IhBB", 0, -32767, 0x02, 1))  # axis 1 (left stick Y) pushed fully up
        qtbot.waitUntil(lambda: sum(1 for s in steps if s["source"] == "human") >= 2, timeout=30_000)
        os.write(writer, struct.pack("=IhBB", 1, 0, 0x02, 1))  # released
    finally:
        os.close(writer)
    live.toggle_control()
    window.session.stop()
    human = [s for s in steps if s["source"] == "human"]
    assert all(s["macro"][0][0]["left_y"] > 0.9 for s in human[:2])
