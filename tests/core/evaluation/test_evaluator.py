"""The evaluator process on the real built-in world: it finds the block, follows it, judges tasks."""

from __future__ import annotations

import os
import signal
import time

import pytest

from core.evaluation.client import EvaluatorClient, EvaluatorError
from core.evaluation.driver import ScriptedDriver
from core.evaluation.stepping import StepProtocol
from core.evaluation.tasks import Goto, Interact, load_task
from core.game.builtin import BuiltinWorld
from core.game.pad import Button, PadState
from core.paths import TASKS_DIR


@pytest.fixture(scope="module")
def evaluator(world):
    with EvaluatorClient.launch(world.pid) as client:
        client.wait_locked()
        yield client


def test_it_finds_the_block_and_follows_the_character(world, evaluator):
    world.reset("plaza_north")
    before = evaluator.sample_after(time.time())
    assert (before.x, before.y, before.tick) == (0.0, 9.0, 0)
    world.hold(PadState(left_y=1.0), 1.0)
    after = evaluator.sample_after(time.time())
    assert after.y == pytest.approx(13.0, abs=0.05) and after.tick == 30


def test_it_samples_at_sixty_hertz_or_more(evaluator):
    start = len(evaluator.samples)
    evaluator.wait_until(lambda: len(evaluator.samples) >= start + 61, timeout=10, what="61 samples")
    window = evaluator.samples[start:start + 61]
    rate = 60 / (window[-1].time - window[0].time)
    assert rate >= 55, f"sampled at {rate:.1f} Hz"


def test_a_step_costs_one_sample_and_the_rhythm_goes_on(world, evaluator):
    """A step costs at most its end's sample: judging it reads nothing more (the evaluator judges the sample
    it already sent), and the state before a step is the last one's end, already read."""
    world.reset("plaza_north")
    protocol = StepProtocol(world, evaluator)
    protocol.sample_now()
    start, started = len(evaluator.samples), time.time()
    steps = 40
    for step in range(1, steps + 1):
        protocol.begin()
        end = protocol.end(world.hold(PadState(left_y=1.0 if step % 2 else -1.0), 0.1))
        assert not protocol.judge(end, step, "agent")
    elapsed = evaluator.samples[-1].time - started
    taken = len(evaluator.samples) - start
    periodic = elapsed * 60
    assert taken <= steps + periodic * 1.2 + 3, f"{taken} samples for {steps} steps in {elapsed:.3f} s"
    evaluator.wait_until(lambda: evaluator.samples[-1].time > time.time() - 0.05 and len(evaluator.samples)
                         > start + taken + 3, timeout=10, what="samples at the evaluator's own rhythm")


def test_an_interaction_flips_the_right_flag(world, evaluator, builtin_profile):
    world.reset("plaza_north")
    world.hold(PadState(left_x=0.93, left_y=0.36), 1.4)
    for _ in range(3):
        world.press(Button.A)
    flags = evaluator.sample_after(time.time()).flags
    assert builtin_profile.flag_names(flags) == ["talked_old_man"]


@pytest.mark.parametrize("task_id", ["q08_site_navigation", "q04_clock_interaction", "q01_bread_mixed",
                                     "q10_market_mixed"])
def test_success_fires_when_the_reference_route_completes(world, evaluator, builtin_profile, task_id):
    task = load_task(TASKS_DIR / f"{task_id}.yaml", builtin_profile.flags)
    result = ScriptedDriver(world, evaluator).drive(task)
    assert result.success, result.message
    assert result.success_step == task.reference_steps
    assert evaluator.successes[0]["step"] == result.success_step and result.privileged


@pytest.mark.parametrize(("task_id", "skipped"), [
    ("q02_badge_mixed", (4.5, -90)),           # walks up to the guard the first time without hearing him out
    ("q09_school_mixed", (-13, 23.4)),         # passes the clock crank without winding it
    ("q10_market_mixed", (36.5, -50)),         # walks to the builder without talking to him
    ("q01_bread_mixed", (-5.5, 17)),           # carries the letter to the mailbox but does not post it
    ("q05_lookout_mixed", (6.5, 11.5)),        # walks past Orin without hearing him out (the first stage)
    ("q06_townhall_mixed", (4.5, -90)),        # goes down to the town gate but does not invite the guard
    ("q07_west_mixed", (-24, -62)),            # passes the gardener on the way to the footbridge
    ("q08_site_mixed", (55.5, 67.5)),          # climbs to the chest but does not open it, then goes back
    ("q06_townhall_interaction", (24, 14.6)),  # stands at the town hall door without opening it
])
def test_a_long_quest_fails_when_one_stage_is_passed_by(world, evaluator, builtin_profile, task_id, skipped):
    task = load_task(TASKS_DIR / f"{task_id}.yaml", builtin_profile.flags)
    route = list(task.reference_route)
    stage = next(i for i, step in enumerate(route) if isinstance(step, Interact) and step.interact.target == skipped)
    route[stage] = Goto(goto=route[stage].interact.approach)
    result = ScriptedDriver(world, evaluator).drive(task.model_copy(update={"reference_route": route}))
    assert not result.success and not result.blocked, result.message
    # The rest of the quest was done: only the one interaction's few presses are missing from the route.
    assert task.reference_steps is not None and result.steps > task.reference_steps - 10


def test_success_does_not_fire_for_a_route_not_taken(world, evaluator):
    world.reset("plaza")
    evaluator.set_task({"reach": {"x": 56, "y": 64, "radius": 3}})
    world.hold(PadState(left_y=1.0), 2.0)
    evaluator.sample_after(time.time())
    assert evaluator.successes == []


def test_a_bad_condition_is_refused_with_a_reason(evaluator):
    with pytest.raises(EvaluatorError, match="bad success condition"):
        evaluator.set_task({"teleport": {"x": 1}})
    with pytest.raises(EvaluatorError, match="does not define"):
        evaluator.set_task({"flag": {"name": "became_champion"}})


def test_it_rescans_when_the_block_moves(world, evaluator):
    first = evaluator.status["address"]
    states = []
    evaluator.subscribe(lambda message: states.append(message["state"]) if message["type"] == "status" else None)
    world.simulate_game_restart()
    evaluator.wait_until(lambda: "lost" in states and evaluator.status["state"] == "locked", timeout=30,
                         what="a rescan")
    assert evaluator.status["address"] != first
    world.hold(PadState(left_y=1.0), 0.5)
    assert evaluator.sample_after(time.time()).tick == world.latest_frame().tick


def test_it_reports_when_the_game_exits():
    game = BuiltinWorld.launch(renderer="software")
    try:
        with EvaluatorClient.launch(game.pid) as client:
            client.wait_locked()
            os.kill(game.pid, signal.SIGKILL)
            client.wait_until(lambda: client.status["state"] in ("game_exited", "disconnected"), timeout=20,
                              what="the game's exit to be reported")
            assert client.status["state"] == "game_exited"
            assert f"game process {game.pid} has exited" in client.status["message"]
    finally:
        game.close()
