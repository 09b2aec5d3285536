"""Numbers no reviewer can fault, on the real built-in world: a success is the agent's own, no push after the
budget, a dialogue is not a wall, continuous moves are judged against open ground, a task must ask for something,
and trials are independent (issue 20). Each case was reproduced with the world before it was fixed."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from core.agents.base import ReplayAgent
from core.authoring.try_task import try_task
from core.backends.profile import load_backend
from core.episode.metrics import AWARE, EXECUTION
from core.evaluation.client import EvaluatorClient
from core.evaluation.conditions import Reach, ReachSpec
from core.evaluation.driver import ScriptedDriver
from core.evaluation.tasks import InlineStart, Interact, InteractSpec, load_task
from core.paths import PROJECT_ROOT, TASKS_DIR
from core.session.episodes import plan_episodes
from core.session.interventions import InterventionPolicy
from core.session.runner import EpisodeRunner, RunOptions

# From park_gate with the camera facing west: walk left (south) 8 m, then straight into the park fence. The fence
# stops the character at x = -8.575 after its third forward step; the 3 IMs after it trigger a push at step 10.
TO_THE_FENCE = ['{"action": "MoveLeft", "self_assessment": "progressing"}'] * 4
STUCK = '{"action": "MoveForward", "self_assessment": "stuck"}'
LOOK = '{"action": "RotateLeft", "self_assessment": "unsure"}'


@pytest.fixture(scope="module")
def evaluator(world):
    with EvaluatorClient.launch(world.pid) as client:
        client.wait_locked()
        yield client


@pytest.fixture(scope="module")
def actions(builtin_profile):
    return load_backend("builtin").action_set()


@pytest.fixture(scope="module")
def fence_task(builtin_profile):
    return load_task(TASKS_DIR / "q02_badge_interaction.yaml", builtin_profile.flags)


def play(world, evaluator, actions, task, replies, **options):
    runner = EpisodeRunner(world, evaluator, ReplayAgent(actions, replies, options.pop("paradigm", "discrete")),
                           actions, task, RunOptions(**options), None)
    return runner, runner.run()


@pytest.fixture(scope="module")
def push_landing(world, evaluator, actions, fence_task):
    """Where the automatic push-back after the fence leaves the character (lockstep: the same every time)."""
    runner, _ = play(world, evaluator, actions, fence_task, TO_THE_FENCE + [STUCK] * 7, step_budget=11,
                     interventions=InterventionPolicy("physical", k=3))
    pushed = [s for s in runner.episode if s.intervention is not None]
    assert [s.step for s in pushed] == [10] and pushed[0].intervention_displacement > 2.0
    return runner.episode.step(10).position_before  # step 11 starts where the push ended


def test_a_push_into_the_goal_is_no_success_the_agents_next_step_is(world, evaluator, actions, fence_task,
                                                                    push_landing):
    goal = fence_task.model_copy(update={"success": Reach(reach=ReachSpec(x=push_landing[0], y=push_landing[1],
                                                                          radius=0.3))})
    pushed = InterventionPolicy("physical", k=3)
    # The push lands in the goal after step 10; the agent's next step only looks around: it ends there, a success.
    _, looked = play(world, evaluator, actions, goal, TO_THE_FENCE + [STUCK] * 6 + [LOOK], step_budget=12,
                     interventions=pushed)
    assert looked.success and looked.success_step == 11 and looked.success_source == "agent", looked
    assert looked.steps_used == 11
    # If the agent walks straight out again, the push's landing never counts.
    runner, walked = play(world, evaluator, actions, goal, TO_THE_FENCE + [STUCK] * 8, step_budget=12,
                          interventions=pushed)
    assert not walked.success and walked.success_source is None
    assert any(s.intervention is not None for s in runner.episode)
    # And without interventions the agent stays stuck at the fence: an Aware Deadlock, as before.
    _, alone = play(world, evaluator, actions, goal, TO_THE_FENCE + [STUCK] * 8, step_budget=12)
    assert not alone.success and alone.failure_category_suggestion == AWARE


def test_no_automatic_push_after_the_budgets_last_step(world, evaluator, actions, fence_task):
    # The third IM at the fence is step 10; with a budget of 10 a push there could only move the category.
    runner, result = play(world, evaluator, actions, fence_task, TO_THE_FENCE + [STUCK] * 6, step_budget=10,
                          interventions=InterventionPolicy("physical", k=3))
    assert [s.intervention for s in runner.episode] == [None] * 10
    assert result.failure_category_suggestion == AWARE  # a push at step 10 used to end the span: "Lost"
    assert result.metrics["deadlocks"][-1]["ended_by"] is None


def test_moves_inside_a_dialogue_are_counted_apart_and_never_a_deadlock(world, evaluator, actions, fence_task):
    at_the_baker = fence_task.model_copy(update={"start_state": InlineStart(pos=(-17.0, -5.0), facing=180.0)})
    talk = '{"action": "Interact", "self_assessment": "progressing"}'
    runner, result = play(world, evaluator, actions, at_the_baker, [talk] + [STUCK] * 4, step_budget=5,
                          interventions=InterventionPolicy("physical", k=3))
    steps = runner.episode.steps()
    assert [s.dialogue_open for s in steps] == [False, True, True, True, True]  # the evaluator's dialogue_active
    metrics = result.metrics
    assert metrics["ineffective_moves"] == 4 and metrics["im_rate"] == 1.0  # the benchmark's own IM rate
    assert metrics["dialogue_moves"] == 4 and metrics["im_rate_physical"] is None  # no move outside the dialogue
    assert metrics["deadlocks"] == [] and metrics["max_consecutive_im"] == 0
    assert all(s.intervention is None for s in steps)  # nothing to push out of: a dialogue is not a wall
    assert result.failure_category_suggestion != AWARE


def test_continuous_moves_are_judged_against_open_ground(world, evaluator, actions, fence_task):
    motion = load_backend("builtin").continuous_motion
    assert motion is not None
    slow = '{"action": {"left_stick": [0.16, 0], "right_stick": [0, 0], "duration": 2.0}, ' \
           '"self_assessment": "progressing"}'
    open_ground = fence_task.model_copy(update={"start_state": "south_gate"})
    runner, result = play(world, evaluator, actions, open_ground, [slow] * 3, step_budget=3, paradigm="continuous",
                          motion=motion)
    moved = [s.displacement for s in runner.episode]
    assert all(0.08 < d < 0.11 for d in moved), moved  # free, just slow: 0.094 m each
    assert result.metrics["ineffective_moves"] == 0 and result.metrics["deadlocks"] == []  # was an Unaware span
    left = '{"action": {"left_stick": [-1, 0], "right_stick": [0, 0], "duration": 0.5}}'
    forward = '{"action": {"left_stick": [0, 1], "right_stick": [0, 0], "duration": 0.5}, "self_assessment": "stuck"}'
    runner, blocked = play(world, evaluator, actions, fence_task, [left] * 4 + [forward] * 6, step_budget=10,
                           paradigm="continuous", motion=motion)
    assert [s.ineffective for s in runner.episode][-3:] == [True] * 3  # a full stick against the fence
    assert runner.episode.step(-1).im_threshold_m == pytest.approx(0.5, abs=0.01)
    assert blocked.failure_category_suggestion == AWARE


def test_a_deadlock_next_to_the_goal_is_an_execution_failure(world, evaluator, actions, fence_task):
    # The badge task's goal is the guard at the south gate, far from the fence: the fence is an Aware Deadlock.
    _, far = play(world, evaluator, actions, fence_task, TO_THE_FENCE + [STUCK] * 6, step_budget=10)
    assert far.failure_category_suggestion == AWARE
    # The same fence, with the task's goal (an interaction target) 2 m beyond it: stuck on nearby geometry.
    near = fence_task.model_copy(update={"reference_route": [Interact(interact=InteractSpec(target=(-10.5, -54.0)))]})
    _, stuck = play(world, evaluator, actions, near, TO_THE_FENCE + [STUCK] * 6, step_budget=10)
    assert stuck.failure_category_suggestion == EXECUTION


def test_a_task_whose_success_holds_at_its_start_is_refused(world, evaluator, actions, fence_task, tmp_path):
    met = fence_task.model_copy(update={"start_state": "south_gate",
                                        "success": Reach(reach=ReachSpec(x=0.0, y=-84.0, radius=3.0))})
    _, result = play(world, evaluator, actions, met, [LOOK], step_budget=5)
    assert result.end_reason == "task_error" and not result.success and result.steps_used == 0
    assert "already holds at its start state" in result.error
    driven = ScriptedDriver(world, evaluator).drive(met)
    assert not driven.success and driven.met_at_start and "already holds at the start state" in driven.message
    tried = try_task(met, world, evaluator)  # the studio's Try it and `tasks try` say so, not "route blocked"
    assert tried.outcome == "met_at_start" and tried.reason.startswith("the success condition already holds")
    path = tmp_path / "met.yaml"
    text = (TASKS_DIR / "q08_site_navigation.yaml").read_text().replace("q08_site_navigation", "met")
    start = next(line for line in text.splitlines() if line.startswith("start_state:"))
    path.write_text(text.replace(start, "start_state: {pos: [34.0, -48.0], facing: 0}"))
    checked = subprocess.run([sys.executable, "main.py", "tasks", "validate", str(path), "--drive"], cwd=PROJECT_ROOT,
                             capture_output=True, text=True, timeout=300)
    assert checked.returncode == 1 and "already holds at the start state" in checked.stdout, checked.stdout


def test_every_episode_has_a_seed_of_its_own_and_reruns_keep_them():
    specs = plan_episodes("q03_pier_interaction,q03_pier_navigation", "all", "random", 2)
    seeds = [spec.seed(0) for spec in specs]
    assert len(specs) == 12 and len(set(seeds)) == 12  # two tasks from the plaza, 3 granularities, 2 trials
    assert seeds == [spec.seed(0) for spec in plan_episodes("q03_pier_interaction,q03_pier_navigation", "all",
                                                            "random", 2)]
    assert seeds != [spec.seed(1) for spec in specs]  # another run seed, other episodes


def test_two_tasks_from_one_start_play_different_random_trajectories(tmp_path):
    out = tmp_path / "run"
    # Both start in the plaza: with one seed for both (run seed + trial, as it once was), they replayed one walk.
    command = [sys.executable, "main.py", "run", "--tasks", "q03_pier_interaction,q03_pier_navigation",
               "--agent", "random", "--budget", "6", "--out", str(out)]
    done = subprocess.run(command, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and rows[0]["seed"] != rows[1]["seed"]
    assert rows[0]["trajectory_digest"] != rows[1]["trajectory_digest"]  # one seed for both used to replay one walk
    again = tmp_path / "again"
    subprocess.run([*command[:-1], str(again)], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300,
                   check=True)
    rerun = [json.loads(line) for line in (again / "results.jsonl").read_text().splitlines()]
    assert {r["trajectory_digest"] for r in rerun} == {r["trajectory_digest"] for r in rows}  # bit-identical reruns
