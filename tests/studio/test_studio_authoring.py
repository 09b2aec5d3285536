"""The Live view's task-authoring panel (pytest-qt, offscreen): drive, capture, save, try."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QFileDialog

from core.evaluation.tasks import Goto, Interact, load_task
from core.game.pad import Button, PadState
from studio.live_controls import LiveChoices
from studio.live_session import LiveSession
from studio.main_window import MainWindow

TEXTS = {"visual_guided": "Walk south from the fountain toward the cobbled lane.",
         "step_guided": "1. Go south. 2. Stop at the lane.", "goal_only": "Go to the lane."}


@pytest.fixture
def window(live_window):
    return live_window


def show_panel(window):
    """Bring the "Author task" dock to the front (it shares its place with the Episode form)."""
    window.live.findChild(QDockWidget, "dock-Author task").raise_()
    return window.live.authoring


def fill_in(qtbot, panel, task_id: str, category: str = "navigation", budget: int = 40, texts=TEXTS) -> None:
    form = panel.form
    qtbot.keyClicks(form.id, task_id)
    qtbot.keyClicks(form.title, "An authored task")
    qtbot.keyClicks(form.quest, "q99_authoring")
    form.category.setCurrentText(category)
    form.budget.setValue(budget)
    for granularity, text in texts.items():
        qtbot.keyClicks(form.instructions[granularity], text)


def plotted_route(window) -> list[tuple[float, float]]:
    route = next(item for item in window.live.trajectory.listDataItems() if item.name() == "reference route")
    xs, ys = route.getData()
    return [] if xs is None else [(float(x), float(y)) for x, y in zip(xs, ys)]


def test_a_task_authored_by_driving_is_saved_listed_and_solved(window, qtbot, tmp_path):
    live, panel = window.live, show_panel(window)
    form = panel.form
    panel.tasks_dir = tmp_path / "tasks"
    panel.sig_task_added.connect(live.controls.add_task)
    start = window.session.host.latest_sample()

    form.capture_start.click()
    live.toggle_control()
    for _ in range(4):
        qtbot.keyClick(live, Qt.Key.Key_W)
    form.add_waypoint.click()
    for _ in range(4):
        qtbot.keyClick(live, Qt.Key.Key_W)
    form.add_waypoint.click()
    assert form.radius.suffix() == " m"  # the built-in world's units
    form.radius.setValue(2.5)
    form.record_goal.click()
    live.toggle_control()
    qtbot.waitUntil(lambda: form.route.count() == 2 and form.goal.text().startswith("Goal:"), timeout=30_000)

    first, second = (step.goto for step in panel.draft.route)
    assert math.dist(first, (start.x, start.y)) == pytest.approx(4.0, abs=0.5)  # four key presses of walking
    assert math.dist(second, first) == pytest.approx(4.0, abs=0.5)
    assert form.start.currentText().startswith(f"captured at ({start.x:g}, {start.y:g})")
    assert form.goal.text() == f"Goal: ({second[0]:g}, {second[1]:g}), radius 2.5 m"
    assert form.route.item(0).text() == f"1. walk to ({first[0]:g}, {first[1]:g})"
    begin = tuple(panel.draft.start_state.pos)
    assert plotted_route(window) == [begin, first, second]  # the draft's route, from its start, as it is captured
    form.add_waypoint.click()  # one too many: Remove takes the last step when none is selected
    qtbot.waitUntil(lambda: form.route.count() == 3, timeout=30_000)
    form.remove_step.click()
    assert form.route.count() == 2 and plotted_route(window) == [begin, first, second]

    fill_in(qtbot, panel, "authored_lane")
    panel.bar.save_button.click()

    path = tmp_path / "tasks" / "authored_lane.yaml"
    assert panel.bar.message.text() == f"Saved {path}." and panel.bar.message.property("kind") == "ok"
    task = load_task(path, panel.draft.flag_names, panel.draft.start_states)
    assert task.reference_route == [Goto(goto=first), Goto(goto=second)] and task.success.reach.radius == 2.5
    assert task.instruction("goal_only") == TEXTS["goal_only"] and task.step_budget == 40
    assert live.controls.task.findText("authored_lane") >= 0
    live.controls.task.setCurrentText("q08_site_navigation")
    assert plotted_route(window) != [begin, first, second]
    live.controls.task.setCurrentText("authored_lane")  # selecting it shows its route again, from its start
    assert plotted_route(window) == [begin, first, second]

    with qtbot.waitSignal(panel.sig_tried, timeout=120_000) as tried:
        panel.bar.try_button.click()
        assert panel.bar.try_result.text().startswith("Trying authored_lane")
        assert not panel.bar.try_button.isEnabled() and panel.bar.progress.isVisible()
    result = tried.args[0]
    assert result.success, result.reason
    assert panel.bar.try_result.text().startswith("Solved at step")
    assert panel.bar.try_result.property("kind") == "ok"
    assert panel.bar.try_button.isEnabled() and not panel.bar.progress.isVisible()


def test_an_invalid_task_is_explained_in_the_panel_and_nothing_is_written(qtbot, settings_dir, tmp_path):
    main = MainWindow(LiveSession())  # no world needed to validate
    qtbot.addWidget(main)
    try:
        panel = main.live.authoring
        panel.tasks_dir = tmp_path / "tasks"
        fill_in(qtbot, panel, "authored_bad", texts={})
        panel.bar.save_button.click()

        message = panel.bar.message.text()
        # The fields are named as the form names them and marked there; no file (not written yet) is named.
        assert message.startswith("Fix the fields marked in red:") and ".yaml" not in message
        assert "Visual-guided instructions: Field required" in message
        assert "Goal or flags (the success condition): Field required" in message  # no goal and no flag either
        assert panel.bar.message.property("kind") == "error"
        assert panel.form.instructions["visual_guided"].property("invalid") and panel.form.goal.property("invalid")
        assert not panel.form.id.property("invalid")
        assert not panel.tasks_dir.exists()

        qtbot.keyClicks(panel.form.instructions["visual_guided"], "Go")
        panel.bar.try_button.click()  # trying checks the same way, before touching the game
        assert "Visual-guided instructions: String should have at least 10 characters" in panel.bar.message.text()
        assert panel.form.instruction_tabs.currentWidget() is panel.form.instructions["visual_guided"]
        assert panel.bar.try_result.text() == "" and panel.bar.try_button.isEnabled()
    finally:
        main.close()


def test_try_it_is_refused_while_an_episode_runs(window, qtbot):
    session, panel = window.session, show_panel(window)
    ends, tried = [], []
    session.sig_episode_end.connect(ends.append)
    panel.sig_tried.connect(tried.append)
    session.start_episode(LiveChoices("q08_site_navigation", budget=200))

    panel.bar.try_button.click()
    assert panel.bar.message.text().startswith("An episode is running: stop it before trying the task")
    assert panel.bar.message.property("kind") == "error" and panel.bar.try_result.text() == ""
    panel.form.record_goal.click()  # capturing still works: from the episode's newest sample
    assert panel.form.goal.text().startswith("Goal:")

    session.stop()
    qtbot.waitUntil(lambda: bool(ends), timeout=60_000)
    assert not tried


def test_a_flag_set_by_talking_is_listed_and_becomes_the_success_condition(window, qtbot, tmp_path, monkeypatch):
    session, panel = window.session, show_panel(window)
    form = panel.form
    form.start.setCurrentText("plaza_north")
    form.go_to_start.click()
    qtbot.waitUntil(lambda: panel.bar.message.text().startswith("At the start state"), timeout=30_000)
    assert panel.flags_listed() == {}

    session.human_input(PadState(left_x=0.93, left_y=0.36), 1.4)  # up to Orin, the old man, facing him
    for _ in range(3):  # open the dialogue, next line, close it
        session.human_input(PadState(buttons=frozenset({Button.A})), 0.1)
        session.human_input(PadState(), 1 / 30)
    qtbot.waitUntil(lambda: "talked_old_man" in panel.flags_listed(), timeout=30_000)

    item = form.flags.item(0)
    assert item.text() == "talked_old_man → set" and item.checkState() == Qt.CheckState.Unchecked
    item.setCheckState(Qt.CheckState.Checked)
    form.add_interact.click()  # Orin is in front: the step presses A at him
    qtbot.waitUntil(lambda: form.route.count() == 1, timeout=30_000)
    assert form.route.item(0).text().startswith("1. press A at (")
    qtbot.waitUntil(lambda: panel.flags_listed() == {"talked_old_man": True})  # kept after the capture

    fill_in(qtbot, panel, "authored_talk", category="interaction", budget=30)
    chosen = tmp_path / "elsewhere"
    chosen.mkdir()
    offered = []

    def save_dialog(parent, title, start, file_filter):
        offered.append(Path(start).name)
        return str(chosen / "authored_talk"), file_filter  # the user keeps the name, types no extension

    monkeypatch.setattr(QFileDialog, "getSaveFileName", save_dialog)
    panel.bar.save_as_button.click()
    assert offered == ["authored_talk.yaml"]  # the dialog offered the task's id as the file name
    assert panel.bar.message.text() == f"Saved {chosen / 'authored_talk.yaml'}."
    task = load_task(chosen / "authored_talk.yaml", panel.draft.flag_names, panel.draft.start_states)
    assert task.start_state == "plaza_north" and isinstance(task.reference_route[0], Interact)
    assert task.success.model_dump(exclude_defaults=True) == {"flag": {"name": "talked_old_man"}}
    with qtbot.waitSignal(panel.sig_tried, timeout=120_000) as tried:
        panel.bar.try_button.click()
    assert tried.args[0].success, tried.args[0].reason
    assert panel.bar.try_result.text().startswith("Solved")


def test_the_documented_flow_passes_try_it_because_the_goal_ends_the_route(window, qtbot, tmp_path):
    live, panel = window.live, show_panel(window)
    form = panel.form
    panel.tasks_dir = tmp_path / "tasks"
    form.capture_start.click()
    for _ in range(4):  # between episodes the keys drive without Take control
        qtbot.keyClick(live, Qt.Key.Key_W)
    form.add_waypoint.click()
    for _ in range(10):  # on past the last waypoint, then the goal
        qtbot.keyClick(live, Qt.Key.Key_W)
    form.record_goal.click()
    qtbot.waitUntil(lambda: form.goal.text().startswith("Goal:") and form.route.count() == 2, timeout=30_000)
    goal = panel.draft.goal
    assert panel.draft.route[-1].goto == (goal.x, goal.y)  # the recorded goal ends the route
    assert math.dist(panel.draft.route[0].goto, (goal.x, goal.y)) > 5  # well past the waypoint
    fill_in(qtbot, panel, "authored_walk")
    panel.bar.save_button.click()
    assert panel.bar.message.property("kind") == "ok", panel.bar.message.text()
    with qtbot.waitSignal(panel.sig_tried, timeout=120_000) as tried:
        panel.bar.try_button.click()
    assert tried.args[0].success, tried.args[0].reason

    form.route.setCurrentRow(1)
    form.remove_step.click()  # the route now stops at the waypoint, short of the goal
    panel.bar.replace.setChecked(True)
    panel.bar.save_button.click()
    message = panel.bar.message.text()
    assert message.startswith(f"Saved {tmp_path / 'tasks' / 'authored_walk.yaml'}, but the reference route ends")
    assert "Try it will stop short" in message and panel.bar.message.property("kind") == "error"


def test_try_it_reports_its_steps_and_can_be_cancelled(window, qtbot):
    session, panel = window.session, show_panel(window)
    before = session.host.latest_sample()
    task = max(session.host.tasks, key=lambda t: t.reference_steps or 0)  # the longest route of the suite
    panel._tried = task
    panel.bar.progress.setRange(0, task.step_budget)
    panel._set_trying(True)
    panel.worker.try_out(task)
    qtbot.waitUntil(lambda: panel.bar.progress.value() >= 5, timeout=60_000)
    assert panel.bar.cancel_button.isVisible()
    with qtbot.waitSignal(panel.worker.sig_try_cancelled, timeout=60_000):
        panel.bar.cancel_button.click()
    assert panel.bar.try_result.text().startswith("Try cancelled") and panel.bar.try_button.isEnabled()
    qtbot.waitUntil(lambda: session.human_inputs_waiting == 0, timeout=10_000)
    after = session.host.evaluator.sample_after(__import__("time").time())
    assert math.dist((after.x, after.y), (before.x, before.y)) < 0.3  # put back where the author was
