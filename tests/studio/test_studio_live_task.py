"""Issue 11 in the Live view (pytest-qt, offscreen, a real world): the map, the instruction and the task
list show the chosen task truthfully; seeds are fresh per Start (or fixed); a lockstep episode can be
watched at a chosen pace without changing what is recorded."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from core.game.pad import PadState
from core.recording.reader import EpisodeReader
from studio.live_controls import LiveChoices
from studio.live_map import task_start
from studio.observed_game import DriveMonitor, ObservedGame
from tests.conftest import run_episode_to_end


@pytest.fixture
def window(live_window):
    return live_window


def run(window, qtbot, choices: LiveChoices) -> dict:
    return run_episode_to_end(window.session, qtbot, choices)


def plotted(item) -> np.ndarray:
    xs, ys = item.getData()
    return np.zeros((0, 2)) if xs is None else np.column_stack([xs, ys])


def test_the_map_starts_at_the_tasks_start_and_the_trail_is_cleared_on_reset_and_restart(window, qtbot):
    live, session = window.live, window.session
    task = session.host.task("q01_bread_interaction")
    here = session.host.latest_sample()
    begin = task_start(task)
    assert math.dist((here.x, here.y), begin) > 30  # the character stands far from this task's start
    qtbot.waitUntil(lambda: live.trajectory.points > 0, timeout=10_000)  # a trail from before the episode

    run(window, qtbot, LiveChoices(task.id, budget=8))
    qtbot.waitUntil(lambda: live.reasoning.count == 8, timeout=10_000)
    start_xs, start_ys = live.trajectory._start.getData()
    assert (float(start_xs[0]), float(start_ys[0])) == begin
    route = plotted(live.trajectory._route)
    assert tuple(route[0]) == begin and len(route) == len(task.reference_route) + 1  # the route from the start
    path = live.trajectory.ended_path  # the ended episode's trail, kept while the character is driven on
    assert math.dist(tuple(path[0]), begin) < 1.0  # the trail starts where the episode did
    jumps = np.hypot(*np.diff(path, axis=0).T)
    assert jumps.max(initial=0.0) < 5.0  # and has no "teleport" line from before the reset

    live.restart_world()
    assert live.trajectory.points == 0 and live.frame_view.overlay_text("top_right") == ""
    assert len(live.trajectory.ended_path) == 0
    qtbot.waitUntil(lambda: "Connected" in live.status.full_text(), timeout=60_000)


def test_the_instruction_the_agent_receives_is_shown_with_the_title(window, qtbot):
    live, session = window.live, window.session
    live.controls.task.setCurrentText("q03_pier_navigation")
    live.controls.granularity.setCurrentText("Step-guided")
    task = session.host.task("q03_pier_navigation")
    assert live.instruction.instruction == task.instruction("step_guided")
    assert task.title in live.instruction.text() and "instruction at Start" in live.instruction.text()
    run(window, qtbot, LiveChoices(task.id, granularity="step_guided", budget=2))
    assert live.instruction.instruction == task.instruction("step_guided")
    live.controls.granularity.setCurrentText("Visual-guided")  # the form changes; the episode ran goal-only
    shown = []  # the view's slot runs first: this sees what it shows for the episode
    session.sig_episode_started.connect(lambda _info: shown.append(live.instruction.instruction))
    run(window, qtbot, LiveChoices(task.id, granularity="goal_only", budget=2))
    assert shown[-1] == task.instruction("goal_only")  # what the agent reads, not what the form says


def test_the_task_list_shows_titles_early_and_sorts_ascending(window):
    tasks = window.live.tasks
    headers = [tasks.table.horizontalHeaderItem(c).text() for c in range(tasks.table.columnCount())]
    assert headers[:2] == ["Task", "Title"]
    assert tasks.task_ids == sorted(tasks.task_ids)


def test_every_start_draws_a_fresh_seed_and_a_fixed_one_repeats_the_episode(window, qtbot, settings_dir):
    seeds, actions = [], []
    for choices in (LiveChoices("q08_site_navigation", budget=5), LiveChoices("q08_site_navigation", budget=5),
                    LiveChoices("q08_site_navigation", budget=5, seed=1234),
                    LiveChoices("q08_site_navigation", budget=5, seed=1234)):
        end = run(window, qtbot, choices)
        qtbot.waitUntil(lambda: not window.session.busy, timeout=10_000)
        with EpisodeReader(end.recording) as episode:
            seeds.append(episode.metadata["options"]["seed"])
            actions.append([r["action"] for r in episode.records()])
    assert len(set(settings_dir.glob("*.h5"))) == 4  # four episodes, four files (even within one second)
    assert seeds[0] != seeds[1] and seeds[2:] == [1234, 1234]
    assert actions[2] == actions[3]


def test_a_paced_hold_takes_its_game_time_and_simulates_the_same(world, truth):
    world.reset("plaza")
    ObservedGame(world, DriveMonitor(rate=None)).hold(PadState(left_y=1.0, right_x=0.5), 1.0)
    fast = truth.read()
    world.reset("plaza")
    started = time.monotonic()
    ObservedGame(world, DriveMonitor(rate=4.0)).hold(PadState(left_y=1.0, right_x=0.5), 1.0)  # a tick at a time, 4x
    took = time.monotonic() - started
    slow = truth.read()
    assert (slow["x"], slow["y"], slow["facing"]) == (fast["x"], fast["y"], fast["facing"])
    assert took >= 1.0 / 4.0  # a second of game time at 4x: at least a quarter second of wall time
