"""The episode runner on the real built-in world: recording, replay determinism, takeover, interventions, CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import threading

import numpy as np
import pytest

from core.agents.base import RandomAgent, ReplayAgent
from core.agents.observe import ObservationOptions
from core.backends.profile import load_backend
from core.evaluation.client import EvaluatorClient
from core.evaluation.tasks import load_task
from core.game.pad import PadState
from core.paths import PROJECT_ROOT, TASKS_DIR
from core.recording.reader import EpisodeReader
from core.session.interventions import InterventionPolicy
from core.session.runner import EpisodeRunner, RunOptions


@pytest.fixture(scope="module")
def evaluator(world):
    with EvaluatorClient.launch(world.pid) as client:
        client.wait_locked()
        yield client


@pytest.fixture(scope="module")
def actions(builtin_profile):
    return load_backend("builtin").action_set()


@pytest.fixture(scope="module")
def task(builtin_profile):
    return load_task(TASKS_DIR / "q08_site_navigation.yaml", builtin_profile.flags)


def test_a_random_episode_is_recorded_completely(world, evaluator, actions, task, tmp_path):
    options = RunOptions(step_budget=8, observation=ObservationOptions(previous_frame=True, side_views=True),
                         frame_every_ticks=5)
    runner = EpisodeRunner(world, evaluator, RandomAgent(actions, seed=5), actions, task, options, tmp_path / "e.h5")
    result = runner.run()
    assert result.steps_used == 8 and result.end_reason == "budget" and not result.success
    assert [s.step for s in runner.episode] == list(range(1, 9))
    with EpisodeReader(tmp_path / "e.h5") as episode:
        assert episode.step_count == 8 and episode.complete
        assert sorted(episode.image_sets()) == ["current", "left", "previous", "right"]
        assert episode.metadata["task_id"] == "q08_site_navigation" and episode.metadata["privileged"] is False
        first = episode.record(0)
        assert first["source"] == "agent" and first["action"] in actions.names and first["raw_reply"].startswith("{")
        assert not episode.image("previous", 0).any() and episode.image("previous", 1).any()
        assert not np.array_equal(episode.image("left", 3), episode.image("right", 3))
        samples = episode.samples()
        assert len(samples["x"]) >= 8 and np.all(np.diff(samples["time"]) > 0)
        numbers = episode.step_numbers()
        assert (numbers["tick_after"] >= numbers["tick_before"]).all()
        assert episode.result["metrics"]["steps"] == 8
        assert episode.metadata["versions"]["episode_format"] == "1"
        ticks = episode.frame_ticks()
        assert len(ticks) >= 8 and np.all(np.diff(ticks) > 0) and ticks[-1] == numbers["tick_after"][-1]
        assert episode.frame(len(ticks) - 1).shape == episode.image("current", 0).shape


def test_replaying_a_recording_reproduces_the_trajectory(world, evaluator, actions, task, tmp_path):
    options = RunOptions(step_budget=10)
    EpisodeRunner(world, evaluator, RandomAgent(actions, seed=11), actions, task, options, tmp_path / "a.h5").run()
    with EpisodeReader(tmp_path / "a.h5") as original:
        replies = [r["raw_reply"] for r in original.records()]
        first = original.step_numbers()
    EpisodeRunner(world, evaluator, ReplayAgent(actions, replies), actions, task, options, tmp_path / "b.h5").run()
    with EpisodeReader(tmp_path / "b.h5") as replay:
        second = replay.step_numbers()
        assert [r["action"] for r in replay.records()] == [json.loads(r)["action"] for r in replies]
    assert np.array_equal(first["tick_after"], second["tick_after"])
    assert np.allclose(first["displacement"], second["displacement"])


class WatchingAgent(RandomAgent):
    """A random agent that keeps every observation it was given."""

    def __init__(self, actions):
        super().__init__(actions, seed=1)
        self.seen = []

    def decide(self, observation):
        self.seen.append(observation)
        return super().decide(observation)


def test_takeover_and_interventions_are_recorded(world, evaluator, actions, task, tmp_path):
    agent = WatchingAgent(actions)
    runner = EpisodeRunner(world, evaluator, agent, actions, task, RunOptions(step_budget=4), tmp_path / "t.h5")
    runner.take_over()
    done = threading.Event()
    thread = threading.Thread(target=lambda: (runner.run(), done.set()))
    thread.start()
    runner.human_input(PadState(left_y=1.0), 0.5)
    runner.request_intervention("push_back")
    runner.request_intervention("text", "Try the lane to the east.")
    runner.resume()
    assert done.wait(60), "the episode did not finish"
    thread.join()
    with EpisodeReader(tmp_path / "t.h5") as episode:
        records = episode.records()
    sources = [r["source"] for r in records]
    assert sources[:2] == ["human", "intervention"] and sources[2:] == ["agent", "agent"]
    assert records[0]["macro"] == [[PadState(left_y=1.0).to_dict(), 0.5]]
    assert records[1]["intervention"]["kind"] == "push_back" and records[1]["intervention"]["source"] == "human"
    assert records[1]["intervention"]["step"] == 2
    assert records[2]["intervention"] == {"step": 3, "source": "human", "kind": "text",
                                          "params": {"hint": "Try the lane to the east."}}
    hints = [entry.feedback for entry in agent.seen[0].history]
    assert "Try the lane to the east." in hints  # the agent's very next prompt carried the hint


def test_the_automatic_policy_pushes_back_after_k_ineffective_moves(world, evaluator, actions, builtin_profile,
                                                                    tmp_path):
    stuck_task = load_task(TASKS_DIR / "q02_badge_interaction.yaml", builtin_profile.flags)
    # From park_gate with the camera facing west, walk left (south) first, then straight into the fence.
    replies = ['{"action": "MoveLeft"}'] * 4 + ['{"action": "MoveForward", "self_assessment": "progressing"}'] * 8
    options = RunOptions(step_budget=12, interventions=InterventionPolicy("physical", k=3))
    result = EpisodeRunner(world, evaluator, ReplayAgent(actions, replies), actions, stuck_task, options,
                           tmp_path / "s.h5").run()
    with EpisodeReader(tmp_path / "s.h5") as episode:
        records = episode.records()
        numbers = episode.step_numbers()
    ineffective = numbers["ineffective"]
    interventions = [r["intervention"] for r in records if r["intervention"]]
    assert ineffective.sum() >= 3, "the fence did not stop the character"
    assert interventions and interventions[0]["kind"] == "push_back" and interventions[0]["source"] == "auto"
    assert result.metrics["ineffective_moves"] == int(ineffective.sum())
    pushed_at = interventions[0]["step"]
    pushed = records[pushed_at - 1]
    assert pushed["intervention_displacement"] > 1.0, "the push itself is measured and kept with its step"
    # The agent's next MoveForward walks back toward the fence on its own: 0.5 s of walking, about 2 m. Measured
    # from before the push it would look like ~1 m; it must be the agent's own distance.
    own = float(numbers["displacement"][pushed_at])
    assert 1.5 < own < 2.5, own
    first = result.metrics["deadlocks"][0]
    assert first["end"] == pushed_at and first["ended_by"] == "intervention" and not first["recovered"]
    assert result.metrics["recovery_rate"] == 0.0  # nothing the agent did got it out


def test_run_then_report_on_a_tiny_suite(tmp_path):
    out = tmp_path / "run"
    command = [sys.executable, "main.py", "run", "--tasks", "q08_site_navigation,q04_clock_interaction",
               "--granularity", "goal", "--agent", "random", "--trials", "1", "--budget", "4", "--out", str(out)]
    first = subprocess.run(command, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert sorted(r["task_id"] for r in rows) == ["q04_clock_interaction", "q08_site_navigation"]
    assert all((out / r["episode"]).exists() for r in rows)
    with EpisodeReader(out / rows[0]["episode"]) as episode:
        assert episode.metadata["position_units"] == "m"  # the built-in world's profile: its maps and bars say so
    again = subprocess.run(command, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300)
    assert "0 episode(s) run" in again.stdout  # resumed: nothing left to do
    report = subprocess.run([sys.executable, "main.py", "report", str(out)], cwd=PROJECT_ROOT, capture_output=True,
                            text=True, timeout=120)
    assert report.returncode == 0, report.stderr
    assert "| random | goal_only | 0.0% | 0.0% | - | 0.0% | 2 | 0 |" in report.stdout
    assert (out / "report.md").exists() and (out / "success_rates.csv").exists() and (out / "im_vs_sr.png").exists()


class BrokenAgent(RandomAgent):
    def decide(self, observation):
        if observation.step == 3:
            raise ConnectionError("the model API returned 503 five times")
        return super().decide(observation)


def test_an_agent_failure_ends_the_episode_and_keeps_the_recording(world, evaluator, actions, task, tmp_path):
    result = EpisodeRunner(world, evaluator, BrokenAgent(actions), actions, task, RunOptions(step_budget=8),
                           tmp_path / "broken.h5").run()
    assert result.end_reason == "error" and "step 3: ConnectionError: the model API returned 503" in result.error
    with EpisodeReader(tmp_path / "broken.h5") as episode:
        assert episode.step_count == 2 and episode.result["end_reason"] == "error"


def wait_for(condition, seconds: float = 30.0) -> bool:
    """Poll a condition with a deadline (no fixed sleeps)."""
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


def test_an_intervention_while_paused_runs_as_one_step_and_stays_paused(world, evaluator, actions, task, tmp_path):
    agent = WatchingAgent(actions)
    runner = EpisodeRunner(world, evaluator, agent, actions, task, RunOptions(step_budget=6), tmp_path / "p.h5")
    steps, hints = runner.episode, []
    runner.events.sig_intervention.connect(
        lambda item: hints.append(item.to_json()) if item.intervention.kind == "text" else None)
    runner.pause()
    results = []
    thread = threading.Thread(target=lambda: results.append(runner.run()))
    thread.start()
    try:
        assert wait_for(lambda: runner.waiting), "the runner did not wait while paused"
        runner.request_intervention("push_back")
        assert wait_for(lambda: len(steps) == 1 and runner.waiting), "the push-back did not run as one step"
        assert steps.step(0).source == "intervention" and not agent.seen  # still paused: the agent was not asked
        runner.request_intervention("text", "The site is east of the shops.")
        assert wait_for(lambda: bool(hints) and runner.waiting)
        assert hints[-1]["status"] == "queued" and hints[-1]["for_step"] == 2 and len(steps) == 1
        runner.step_once()  # one agent step: its prompt carries the hint
        assert wait_for(lambda: len(steps) == 2 and runner.waiting)
        assert [(h["status"], h["for_step"]) for h in hints if h["status"] == "delivered"] == [("delivered", 2)]
        assert hints[-1] == {"step": 2, "source": "human", "kind": "text", "status": "recorded",
                             "params": {"hint": "The site is east of the shops."}}
        assert "The site is east of the shops." in [entry.feedback for entry in agent.seen[0].history]
        runner.request_intervention("text", "Too late: nobody reads this.")
        assert wait_for(lambda: hints[-1]["status"] == "queued")
    finally:
        runner.stop()
        thread.join(60)
    assert [s.source for s in steps] == ["intervention", "agent"]
    assert hints[-1]["status"] == "undelivered" and hints[-1]["params"]["hint"] == "Too late: nobody reads this."
    assert results[0].end_reason == "stopped"
    assert [i["params"]["hint"] for i in results[0].undelivered_interventions] == ["Too late: nobody reads this."]
    with EpisodeReader(tmp_path / "p.h5") as episode:
        assert episode.result["undelivered_interventions"][0]["status"] == "undelivered"


def test_handing_back_leaves_an_agent_paused_before_the_takeover_paused(world, evaluator, actions, task, tmp_path):
    from core.episode.model import StepAppended

    runner = EpisodeRunner(world, evaluator, RandomAgent(actions, seed=3), actions, task, RunOptions(step_budget=6),
                           tmp_path / "p.h5")
    steps: list[threading.Event] = [threading.Event() for _ in range(6)]
    runner.episode.subscribe(lambda event: steps[len(runner.episode.steps()) - 1].set()
                             if isinstance(event, StepAppended) else None)
    runner.pause()  # the user paused the agent, then took the controls
    runner.take_over()
    done = threading.Event()
    thread = threading.Thread(target=lambda: (runner.run(), done.set()))
    thread.start()
    try:
        runner.human_input(PadState(left_y=1.0), 0.3)
        assert steps[0].wait(60), "the human step was not recorded"
        runner.hand_back()
        assert not runner.taken_over and runner.paused  # as the user left it; it had resumed the agent
        runner.step_once()  # Step: one agent step, then paused again
        assert steps[1].wait(60)
        assert runner.paused
    finally:
        runner.stop()
        assert done.wait(60), "the episode did not finish"
        thread.join()
    assert [r.source for r in runner.episode.steps()] == ["human", "agent"]

    resumed = EpisodeRunner(world, evaluator, RandomAgent(actions, seed=3), actions, task, RunOptions(step_budget=2),
                            tmp_path / "r.h5")
    resumed.take_over()  # not paused before: handing back lets the agent go on to the end of its budget
    finished = threading.Event()
    second = threading.Thread(target=lambda: (resumed.run(), finished.set()))
    second.start()
    resumed.hand_back()
    assert finished.wait(60)
    second.join()
    assert [r.source for r in resumed.episode.steps()] == ["agent", "agent"]
