"""Issue 11 in the Live view (pytest-qt, offscreen, a real world): pause means pause, a held key drives
for as long as it is held, and the status bar tells the truth."""

from __future__ import annotations

import math
import time

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication

from core.recording.reader import EpisodeReader
from studio.human_control import HUMAN_STEP_S
from studio.live_controls import LiveChoices
from tests.conftest import StepsSoFar


@pytest.fixture
def window(live_window):
    return live_window


def key(widget, kind: QEvent.Type, code: Qt.Key, repeat: bool = False) -> None:
    QApplication.sendEvent(widget, QKeyEvent(kind, code, Qt.KeyboardModifier.NoModifier, "", repeat))


def human_seconds(record: dict) -> float:
    return sum(seconds for _, seconds in record["macro"])


def test_an_intervention_while_paused_is_one_step_and_a_hint_is_queued_then_delivered(window, qtbot, settings_dir):
    live, session = window.live, window.session
    ends = []
    steps = StepsSoFar(session)
    session.sig_episode_end.connect(ends.append)
    session.start_episode(LiveChoices("q08_site_navigation", budget=50))
    live.actions_by_name["Pause"].trigger()
    qtbot.waitUntil(lambda: live.state_label.text().startswith("Paused after step"), timeout=30_000)
    paused_at = len(steps)

    live.actions_by_name["Push back"].trigger()
    qtbot.waitUntil(lambda: len(steps) == paused_at + 1 and session.runner.waiting, timeout=30_000)
    assert steps[-1]["source"] == "intervention" and steps[-1]["intervention"]["kind"] == "push_back"
    qtbot.waitUntil(lambda: live.state_label.text() == f"Paused after step {paused_at + 1}", timeout=2_000)

    session.intervene("text", "The site is east of the shops.")
    qtbot.waitUntil(lambda: "Hint queued for step" in live.status.full_text(), timeout=10_000)
    assert f"Hint queued for step {paused_at + 2}" in live.status.full_text()
    assert len(steps) == paused_at + 1 and session.runner.waiting  # a hint is no reason to resume

    live.actions_by_name["Step"].trigger()
    qtbot.waitUntil(lambda: "Hint delivered" in live.status.full_text(), timeout=30_000)
    assert f"prompt for step {paused_at + 2} carried" in live.status.full_text()
    qtbot.waitUntil(lambda: len(steps) == paused_at + 2 and session.runner.waiting, timeout=30_000)
    assert steps[-1]["source"] == "agent"

    session.intervene("text", "Sent too late to be read.")
    live.actions_by_name["Stop"].trigger()
    qtbot.waitUntil(lambda: bool(ends), timeout=30_000)
    assert ends[0].result.end_reason == "stopped" and len(steps) == paused_at + 2
    qtbot.waitUntil(lambda: "stopped by user" in live.status.full_text(), timeout=5_000)
    assert "Lost" not in live.status.full_text()
    # The success field agrees with the status line: a user's Stop is not the agent's failure.
    assert live.metrics.labels["success"].text() == "Success: stopped"
    assert ends[0].result.undelivered_interventions[0]["params"]["hint"] == "Sent too late to be read."


def test_a_held_key_drives_only_while_held_and_auto_repeats_add_nothing(window, qtbot, settings_dir):
    live, session = window.live, window.session
    steps = StepsSoFar(session)
    session.start_episode(LiveChoices("q08_site_navigation", budget=400))
    live.toggle_control()
    qtbot.waitUntil(lambda: session.runner.waiting, timeout=30_000)
    before = len(steps)

    pressed = time.monotonic()
    key(live, QEvent.Type.KeyPress, Qt.Key.Key_W)
    for _ in range(60):  # what X sends while a key is held: auto-repeated press and release pairs
        key(live, QEvent.Type.KeyRelease, Qt.Key.Key_W, repeat=True)
        key(live, QEvent.Type.KeyPress, Qt.Key.Key_W, repeat=True)
    qtbot.waitUntil(lambda: sum(s["source"] == "human" for s in steps[before:]) >= 4, timeout=30_000)
    key(live, QEvent.Type.KeyRelease, Qt.Key.Key_W)
    held = time.monotonic() - pressed
    qtbot.waitUntil(lambda: session.runner.waiting and session.human_inputs_waiting == 0, timeout=30_000)
    assert live.driver.held is None  # nothing held, nothing queued, the runner idle: the walking has ended
    human = [s for s in steps[before:] if s["source"] == "human"]
    walked = sum(human_seconds(s) for s in human)
    # At the rate it was held: one 0.25 s step per 0.25 s held (the one in progress may finish).
    assert walked <= held + 2 * HUMAN_STEP_S, (walked, held, len(human))
    assert all(s["macro"][0][0]["left_y"] == 1.0 for s in human)
    live.toggle_control()
    session.stop()


def test_keys_drive_between_episodes_without_take_control(window, qtbot):
    live, session, host = window.live, window.session, window.session.host
    assert not live.human_driving
    start = host.latest_sample()
    key(live.frame_view, QEvent.Type.KeyPress, Qt.Key.Key_W)  # into the game view; the view passes it up
    qtbot.waitUntil(lambda: math.dist((start.x, start.y), (host.latest_sample().x, host.latest_sample().y)) > 1.0,
                    timeout=20_000)
    key(live.frame_view, QEvent.Type.KeyRelease, Qt.Key.Key_W)
    qtbot.waitUntil(lambda: session.human_inputs_waiting == 0 and session.host.pad_held is None, timeout=10_000)
    assert "Take control" in live.authoring.form.driving_help.text()


def test_pause_says_so_and_a_human_step_is_not_captioned_as_the_agents(window, qtbot, settings_dir):
    live, session = window.live, window.session
    steps = StepsSoFar(session)
    session.start_episode(LiveChoices("q08_site_navigation", budget=50))
    qtbot.waitUntil(lambda: len(steps) >= 1, timeout=30_000)
    live.actions_by_name["Pause"].trigger()
    assert live.status.full_text().startswith("Pausing after the step in progress")  # not "Running …" any more
    qtbot.waitUntil(lambda: live.state_label.text().startswith("Paused after step"), timeout=30_000)
    qtbot.waitUntil(lambda: live.observations.caption.text().startswith(f"Step {len(steps)}:"), timeout=5_000)
    qtbot.waitUntil(lambda: live.frame_view.overlay_text("top_right") == f"step {len(steps)} / 50", timeout=5_000)
    live.toggle_control()
    before = len(steps)
    key(live, QEvent.Type.KeyPress, Qt.Key.Key_W)
    key(live, QEvent.Type.KeyRelease, Qt.Key.Key_W)
    qtbot.waitUntil(lambda: len(steps) == before + 1, timeout=30_000)
    # The strip's caption is the human step's, not the agent's last one.
    qtbot.waitUntil(lambda: live.observations.caption.text().startswith(f"Step {before + 1}: "), timeout=5_000)
    assert "the agent was not asked" in live.observations.caption.text()
    live.toggle_control()
    live.actions_by_name["Resume"].trigger()
    assert live.status.full_text().startswith("Running q08_site_navigation again")
    session.stop()
    qtbot.waitUntil(lambda: not session.busy, timeout=30_000)


def test_the_status_bar_tells_the_truth_before_during_and_after(window, qtbot, settings_dir):
    live, session = window.live, window.session
    live.controls.budget.setValue(0)
    live.controls.task.setCurrentText("q03_pier_navigation")
    task = session.host.task("q03_pier_navigation")
    assert live.metrics.labels["step"].text() == f"Step 0 / {task.step_budget}"  # before Start
    live.controls.budget.setValue(7)
    assert live.metrics.labels["step"].text() == "Step 0 / 7"
    # A seed whose random agent walks (4 of its 7 actions move): a fresh seed's agent stands still in 7 steps
    # about one time in 25, and then there is no trail to keep
    live.controls.fixed_seed.setChecked(True)
    live.controls.seed.setValue(4)
    assert live.metrics.labels["success"].text() == "Success: not yet"
    qtbot.waitUntil(lambda: live.state_label.text() == "Idle", timeout=2_000)

    ends = []
    session.sig_episode_end.connect(ends.append)
    live.start()
    qtbot.waitUntil(lambda: live.state_label.text().startswith("Running"), timeout=10_000)
    said = live.status.full_text()
    live.start()  # pressed again during the episode: said in the status bar, no dialog
    assert QApplication.activeModalWidget() is None
    assert "already running" in live.status.full_text()
    qtbot.waitUntil(lambda: bool(ends), timeout=60_000)
    assert live.metrics.labels["success"].text() == "Success: failed"
    assert "Episode failed after 7 steps" in live.status.full_text()
    # The game goes on after the episode: no step count on the frame; the episode's trail is kept apart and
    # driving on draws a fresh one.
    qtbot.waitUntil(lambda: live.frame_view.overlay_text("top_right") == "", timeout=2_000)
    assert live.trajectory.points <= 1 and len(live.trajectory.ended_path) > 1
    with EpisodeReader(next(settings_dir.glob("*.h5"))) as episode:
        assert f"(seed {episode.metadata['options']['seed']})" in said
