"""Authoring a task in the live built-in world: capture, save, reload and try it, as the studio's panel will."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time

import pytest
import yaml

from core.authoring import TaskDraft, TaskExistsError, save_task, try_task
from core.evaluation.client import EvaluatorClient
from core.evaluation.driver import ScriptedDriver
from core.evaluation.sample import StateSample
from core.evaluation.tasks import Goto, InlineStart, Interact, TaskFileError, load_task, task_files
from core.game.errors import InvalidStartStateError
from core.game.pad import Button, PadState
from core.paths import PROJECT_ROOT, TASKS_DIR

SUITE_KEYS = ["format_version", "id", "quest", "category", "title", "start_state", "step_budget", "instructions",
              "success", "reference_route"]
TEXTS = {"visual_guided": "Walk south from the fountain toward the cobbled lane.",
         "step_guided": "1. Go south. 2. Stop at the lane.", "goal_only": "Go to the lane."}


@pytest.fixture(scope="module")
def evaluator(world):
    with EvaluatorClient.launch(world.pid) as client:
        client.wait_locked()
        yield client


def now(evaluator: EvaluatorClient) -> StateSample:
    return evaluator.sample_after(time.time())


def named(draft: TaskDraft, task_id: str, category: str = "navigation", budget: int = 40) -> TaskDraft:
    draft.update(id=task_id, quest="q99_authoring", category=category, title="An authored task", step_budget=budget)
    draft.set_instructions(**TEXTS)
    return draft


def sample_at(x: float, y: float, flags: int = 0) -> StateSample:
    return StateSample(0.0, 0, 1, x, y, 0.0, 90.0, 90.0, -12.0, flags, False)


def talk_to_the_old_man(world, evaluator) -> StateSample:
    """From plaza_north: walk up to Orin, facing him, and talk until the dialogue closes."""
    world.hold(PadState(left_x=0.93, left_y=0.36), 1.4)
    world.press(Button.A)
    while now(evaluator).dialogue_active:
        world.press(Button.A)
    return now(evaluator)


def test_a_task_authored_by_driving_is_saved_reloaded_and_solved(world, evaluator, tmp_path):
    draft = named(TaskDraft.for_builtin_world(), "authored_walk")
    world.reset("plaza")
    draft.capture_start(now(evaluator))
    world.hold(PadState(left_y=1.0), 1.0)  # the camera looks south: four metres south
    draft.add_waypoint(now(evaluator))
    ScriptedDriver(world, evaluator).goto(8.0, -22.0)
    here = now(evaluator)
    draft.add_waypoint(here)
    draft.record_goal(here, radius=2.5)

    path = save_task(draft, tmp_path)

    assert path == tmp_path / "authored_walk.yaml" and [p.name for p in tmp_path.iterdir()] == [path.name]
    umask = os.umask(0o022)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask  # readable like any file the user writes, not 0600
    text = path.read_text()
    assert text.startswith("# PokeGym task") and "Format: docs/task-format.md" in text.splitlines()[0]
    assert list(yaml.safe_load(text)) == SUITE_KEYS
    task = load_task(path, draft.flag_names, draft.start_states)
    assert task == draft.validate(path)
    assert task.start_state == InlineStart(pos=(0.0, -9.0), facing=180.0, camera_yaw=180.0, camera_pitch=-12.0)
    assert task.reference_route[0] == Goto(goto=(0.0, -13.0))
    assert task.success.reach.radius == 2.5
    result = try_task(task, world, evaluator)
    assert result.success and result.outcome == "solved", result.reason
    assert 0 < result.success_step <= result.steps <= task.step_budget and result.privileged


def test_a_captured_start_loads_where_it_was_captured(world, evaluator, tmp_path):
    world.reset("plaza_north")
    talked = talk_to_the_old_man(world, evaluator)
    draft = named(TaskDraft.for_builtin_world(), "authored_elsewhere")
    start = draft.capture_start(talked)
    assert start.flags == ["talked_old_man"]
    draft.record_goal(sample_at(5.0, 3.0))
    draft.add_waypoint(sample_at(5.0, 3.0))
    task = load_task(save_task(draft, tmp_path), draft.flag_names, draft.start_states)

    world.reset("harbor")  # somewhere else entirely, with no flags
    world.reset(task.start_for_reset())
    loaded = now(evaluator)

    assert (loaded.x, loaded.y) == pytest.approx((talked.x, talked.y), abs=0.01)
    assert loaded.facing == pytest.approx(talked.facing, abs=0.1) and loaded.tick == 0
    assert draft.flags_set(loaded) == ["talked_old_man"]
    assert try_task(task, world, evaluator).success


def test_flags_changed_names_the_flag_an_interaction_sets_and_it_becomes_the_condition(world, evaluator,
                                                                                       tmp_path):
    draft = named(TaskDraft.for_builtin_world(), "authored_talk", category="interaction", budget=30)
    world.reset("plaza_north")
    draft.use_named_start("plaza_north")
    draft.set_baseline(now(evaluator))
    after = talk_to_the_old_man(world, evaluator)

    changed = draft.flags_changed_since_capture(after)
    assert changed == ["talked_old_man"]
    draft.add_interact(after)  # Orin stands in front: the step's target
    draft.add_flag_condition(changed[0])
    assert draft.flags_changed_since_capture(now(evaluator)) == []  # the capture is the new baseline

    task = load_task(save_task(draft, tmp_path), draft.flag_names, draft.start_states)
    assert task.success.model_dump(exclude_defaults=True) == {"flag": {"name": "talked_old_man"}}
    step = task.reference_route[0]
    assert isinstance(step, Interact) and step.interact.target == pytest.approx((6.1, 11.4), abs=0.2)
    result = try_task(task, world, evaluator)
    assert result.success, result.reason


def test_a_goal_and_a_flag_combine_as_all_of_or_in_sequence():
    draft = TaskDraft(["talked_baker", "has_letter"])
    draft.record_goal(sample_at(3, 4))
    draft.add_flag_condition("has_letter")
    assert draft.success_data() == {"all_of": [{"reach": {"x": 3.0, "y": 4.0, "radius": 3.0}},
                                               {"flag": {"name": "has_letter"}}]}
    draft.update(combine="sequence")
    draft.add_flag_condition("talked_baker", equals=False)
    assert draft.success_data() == {"sequence": [{"flag": {"name": "has_letter"}},
                                                 {"flag": {"name": "talked_baker", "equals": False}},
                                                 {"reach": {"x": 3.0, "y": 4.0, "radius": 3.0}}]}
    with pytest.raises(ValueError, match="unknown flag 'gold'"):
        draft.add_flag_condition("gold")


def test_every_suite_task_reopened_in_a_draft_writes_back_the_same_task(builtin_profile):
    for path in task_files(TASKS_DIR):
        task = load_task(path, builtin_profile.flags)
        draft = TaskDraft.from_task(task, builtin_profile.flags)
        written, original = yaml.safe_load(draft.to_yaml()), yaml.safe_load(path.read_text())
        assert written == original and list(written) == list(original), path.name
        assert draft.validate(path) == task


def test_save_refuses_an_invalid_draft_naming_the_field_and_line(tmp_path):
    draft = TaskDraft.for_builtin_world()
    named(draft, "authored_bad").use_named_start("plaza")
    draft.record_goal(sample_at(0, -20))
    draft.set_instructions(visual_guided="")
    with pytest.raises(TaskFileError) as caught:
        save_task(draft, tmp_path)
    path = tmp_path / "authored_bad.yaml"
    # parse_task names the line where the instructions mapping begins: the one after its key
    line = next(i for i, row in enumerate(draft.to_yaml().splitlines(), 1) if row.startswith("instructions:")) + 1
    assert f"{path}:{line}: instructions.visual_guided: Field required" in str(caught.value)

    draft.set_instructions(**TEXTS)
    draft.start_state = InlineStart(pos=(0.0, -9.0), flags=["became_champion"])
    with pytest.raises(TaskFileError, match=r"start_state.flags: Value error, unknown flags \['became_champion'\]"):
        save_task(draft, tmp_path)
    draft.use_named_start("moon")
    with pytest.raises(TaskFileError, match="start_state 'moon' is not one of"):
        save_task(draft, tmp_path)
    draft.clear_goal()
    draft.use_named_start("plaza")
    with pytest.raises(TaskFileError, match="success: Field required"):
        save_task(draft, tmp_path)
    assert list(tmp_path.iterdir()) == []  # nothing written, not even a temporary file


def test_save_never_replaces_a_file_unless_asked(tmp_path):
    draft = named(TaskDraft.for_builtin_world(), "authored_twice")
    draft.use_named_start("plaza")
    draft.record_goal(sample_at(0, -20))
    path = save_task(draft, tmp_path)
    first = path.read_text()
    draft.update(title="A second version")
    with pytest.raises(TaskExistsError, match="authored_twice.yaml already exists"):
        save_task(draft, tmp_path)
    assert path.read_text() == first
    assert save_task(draft, tmp_path, overwrite=True) == path
    assert "title: A second version" in path.read_text() and [p.name for p in tmp_path.iterdir()] == [path.name]


def test_a_loaded_task_saves_as_the_same_task(tmp_path, builtin_profile):
    task = load_task(TASKS_DIR / "q03_pier_mixed.yaml", builtin_profile.flags)
    path = save_task(task, tmp_path)
    assert path.name == "q03_pier_mixed.yaml" and load_task(path, builtin_profile.flags) == task


def test_a_start_cannot_be_captured_inside_a_dialogue_or_with_unnamed_flags():
    draft = TaskDraft(["talked_baker"])
    with pytest.raises(ValueError, match="inside a dialogue"):
        draft.capture_start(StateSample(0.0, 0, 1, 0.0, 0.0, 0.0, 0.0, 0.0, -12.0, 0, True))
    with pytest.raises(ValueError, match=r"flag bits \[3\] are set"):
        draft.capture_start(sample_at(0, 0, flags=0b1001))


def test_the_world_refuses_a_start_it_cannot_place_with_a_reason(world):
    for spec, reason in [({"pos": [0, 9], "flags": ["became_champion"]}, "does not define: \\['became_champion'\\]"),
                         ({"pos": [500, 0]}, "outside the world's bounds"),
                         ({"pos": [0, 1]}, "inside an obstacle"),  # the fountain
                         ({"pos": [0, 9], "colour": "red"}, "colour: Extra inputs are not permitted")]:
        with pytest.raises(InvalidStartStateError, match=reason):
            world.reset(spec)


def test_try_reports_why_a_task_fails(world, evaluator):
    draft = named(TaskDraft.for_builtin_world(), "authored_far", budget=10)
    draft.use_named_start("plaza_north")
    draft.record_goal(sample_at(56.0, 64.0))
    draft.route.clear()  # a route that stops short of the goal (recording the goal had ended it there)
    draft.add_waypoint(sample_at(2.0, 12.0))
    assert draft.route_gap() is not None  # Save warns about this one
    unreachable = try_task(draft.validate(), world, evaluator)
    assert not unreachable.success and unreachable.outcome == "goal_not_reached"
    assert "m from the goal (56, 64)" in unreachable.reason and unreachable.steps > 0

    draft.route.clear()
    draft.add_waypoint(sample_at(0.0, 0.0))  # straight into the fountain
    blocked = try_task(draft.validate(), world, evaluator)
    assert blocked.outcome == "route_blocked" and "blocked at" in blocked.reason

    draft.start_state = InlineStart(pos=(0.0, 1.0))
    rejected = try_task(draft.validate(), world, evaluator)
    assert rejected.outcome == "start_rejected" and "start state does not load" in rejected.reason
    assert "inside an obstacle" in rejected.reason


def test_tasks_try_command_launches_its_own_world(tmp_path):
    draft = named(TaskDraft.for_builtin_world(), "authored_cli")
    draft.capture_start(sample_at(0.0, -9.0))
    draft.add_waypoint(sample_at(0.0, -13.0))
    draft.record_goal(sample_at(0.0, -13.0))
    path = save_task(draft, tmp_path)
    tried = subprocess.run([sys.executable, "main.py", "tasks", "try", str(path)], cwd=PROJECT_ROOT,
                           capture_output=True, text=True, timeout=300)
    assert tried.returncode == 0 and tried.stdout.startswith("SOLVED  authored_cli"), tried.stdout + tried.stderr
    path.write_text(path.read_text().replace("category: navigation", "category: sightseeing"))
    refused = subprocess.run([sys.executable, "main.py", "tasks", "try", str(path)], cwd=PROJECT_ROOT,
                             capture_output=True, text=True, timeout=120)
    assert refused.returncode == 1 and f"{path}:5: category: Input should be" in refused.stdout


def test_the_recorded_goal_ends_the_reference_route():
    draft = TaskDraft(["talked_baker"])
    draft.add_waypoint(sample_at(0.0, 10.0))
    draft.record_goal(sample_at(0.0, 21.0), radius=3.0)  # walked on past the last waypoint
    assert [step.goto for step in draft.route] == [(0.0, 10.0), (0.0, 21.0)] and draft.route_gap() is None
    draft.record_goal(sample_at(4.0, 25.0))  # recorded again: the goal's step moves with it
    assert [step.goto for step in draft.route] == [(0.0, 10.0), (4.0, 25.0)]
    draft.add_waypoint(sample_at(2.0, 18.0))  # added after the goal: it still comes before it
    assert [step.goto for step in draft.route] == [(0.0, 10.0), (2.0, 18.0), (4.0, 25.0)]
    draft.remove_route_step(2)
    assert draft.route_gap() == pytest.approx(math.hypot(2.0, 7.0))  # the route now stops short: Save warns
    draft.record_goal(sample_at(2.0, 18.0))  # a goal where the route already ends adds no step
    assert [step.goto for step in draft.route] == [(0.0, 10.0), (2.0, 18.0)]
