"""Ctrl+C during `python main.py run`, with real runs on the built-in world and real signals sent to the
whole foreground process group, as a terminal sends them.

The first Ctrl+C stops cleanly and quickly: queued episodes never start, the running one stops after its
step and is finished and marked interrupted, nothing of it reaches results.jsonl, and the world and
evaluator (in a session of their own, so the signal never reaches them) are closed by the runner. A
resume runs what is missing and replaces the interrupted file. The second Ctrl+C aborts at once.
"""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path

import pytest

from core.agents.base import RandomAgent
from core.backends.profile import load_backend
from core.episode import EpisodeResult
from core.recording.reader import EpisodeReader
from core.session.runner import EpisodeRunner, RunOptions
from tests.cli_process import CliProcess, gone, wait_until

TASK = "q08_site_navigation"
BUDGET = "150"  # steps: seconds of stepping, so the second episode is surely mid-run when Ctrl+C comes
KEYS = [f"{TASK}__goal_only__random__t{trial}" for trial in range(3)]


def _run_args(out: Path) -> list[str]:
    return ["run", "--tasks", TASK, "--granularity", "goal", "--agent", "random", "--trials", "3",
            "--budget", BUDGET, "--out", str(out)]


def _episode_children(run: CliProcess) -> dict[int, str]:
    """The world and evaluator of the episode running now (both up)."""
    found: dict[int, str] = {}

    def both() -> bool:
        found.clear()
        found.update(run.children())
        return sum("core.world" in c or "core.evaluation" in c for c in found.values()) == 2

    wait_until(both, 60, "the episode's world and evaluator processes")
    return found


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture
def runs():
    started: list[CliProcess] = []

    def start(args: list[str]) -> CliProcess:
        started.append(CliProcess(args))
        return started[-1]

    yield start
    for run in started:
        run.close()


def test_the_first_ctrl_c_stops_cleanly_and_a_resume_completes_the_run(runs, tmp_path):
    out = tmp_path / "run"
    run = runs(_run_args(out))
    run.wait_for_line("stdout", f"1/3  {KEYS[0]}", timeout=180)
    second = out / "episodes" / f"{KEYS[1]}.h5"
    wait_until(second.exists, 60, "the second episode's file")
    children = _episode_children(run)
    own_group = os.getpgid(run.pid)
    assert all(os.getpgid(pid) != own_group for pid in children), "the world and evaluator share the terminal's group"

    run.interrupt()
    run.wait_for_line("stderr", "stopping; Ctrl+C again to abort", timeout=10)
    assert run.wait(timeout=30) == 130
    wait_until(lambda: all(gone(pid) for pid in children), 15, "the world and evaluator to be closed")
    assert "1 episode(s) interrupted and 1 not started" in run.text("stderr")

    rows = _rows(out / "results.jsonl")
    assert [r["key"] for r in rows] == [KEYS[0]]  # the interrupted episode is no result, nor an error
    assert not (out / "errors.jsonl").exists()
    assert not (out / "episodes" / f"{KEYS[2]}.h5").exists()  # the queue was cancelled
    with EpisodeReader(second) as episode:  # finished, readable and marked: stopped by the runner, not by
        assert episode.result["end_reason"] == "interrupted"  # a world killed under it ("error")
        # Stopped after the step it was in (none yet when Ctrl+C came while its first step was being judged),
        # long before its budget, and its record says how many it played.
        assert episode.step_count < int(BUDGET) and episode.result["steps_used"] == episode.step_count
    first_written = (out / "episodes" / f"{KEYS[0]}.h5").stat().st_mtime_ns

    again = runs(_run_args(out))
    assert again.wait(timeout=300) == 0, again.text("stderr")
    rows = _rows(out / "results.jsonl")
    assert sorted(r["key"] for r in rows) == KEYS  # each episode exactly once
    assert (out / "episodes" / f"{KEYS[0]}.h5").stat().st_mtime_ns == first_written  # the result was kept
    with EpisodeReader(second) as episode:  # the interrupted file was replaced, not appended to
        assert episode.result["end_reason"] in ("budget", "success")
        assert episode.step_count == episode.result["steps_used"] == next(
            r["steps_used"] for r in rows if r["key"] == KEYS[1])


def test_a_second_ctrl_c_aborts_at_once_and_still_kills_the_children(runs, tmp_path):
    """A hung world (stopped with SIGSTOP) holds the first, clean stop; the second Ctrl+C does not wait."""
    out = tmp_path / "run"
    run = runs(_run_args(out))
    wait_until((out / "episodes" / f"{KEYS[0]}.h5").exists, 120, "the first episode's file")
    children = _episode_children(run)
    world = next(pid for pid, command in children.items() if "core.world" in command)
    ring_folder = next(Path(line.split()[-1]).parent for line in Path(f"/proc/{world}/maps").read_text().splitlines()
                       if line.endswith("frames.bin"))
    os.kill(world, signal.SIGSTOP)  # the game hangs mid-step: the runner's request cannot be answered

    run.interrupt()
    run.wait_for_line("stderr", "stopping; Ctrl+C again to abort", timeout=10)
    assert run.process.poll() is None  # still waiting for the hung step, as a clean stop must
    run.interrupt()
    assert run.wait(timeout=20) == 130  # far sooner than the 120 s a hung world request waits
    assert "aborted" in run.text("stderr")
    wait_until(lambda: all(gone(pid) for pid in children), 15, "the world and evaluator to be killed")
    assert not ring_folder.exists(), "the aborted world's frame ring was left in /dev/shm"
    assert not _rows(out / "results.jsonl") and not (out / "errors.jsonl").exists()


class SlowAgent(RandomAgent):
    """Decides at once for two steps, then waits (like a slow model API) until released."""

    def __init__(self, actions):
        super().__init__(actions)
        self.waiting, self.release = threading.Event(), threading.Event()

    def decide(self, observation):
        if observation.step >= 3:
            self.waiting.set()
            self.release.wait(120)
        return super().decide(observation)


def test_stop_does_not_wait_for_a_decision_in_flight(world, tmp_path, builtin_profile):
    from core.evaluation.client import EvaluatorClient
    from core.evaluation.tasks import load_task
    from core.paths import TASKS_DIR

    actions = load_backend("builtin").action_set()
    task = load_task(TASKS_DIR / f"{TASK}.yaml", builtin_profile.flags)
    agent = SlowAgent(actions)
    with EvaluatorClient.launch(world.pid) as evaluator:
        evaluator.wait_locked()
        runner = EpisodeRunner(world, evaluator, agent, actions, task, RunOptions(step_budget=50), tmp_path / "e.h5")
        results: list[EpisodeResult] = []
        thread = threading.Thread(target=lambda: results.append(runner.run()))
        thread.start()
        try:
            assert agent.waiting.wait(60)
            runner.stop("interrupted")
            thread.join(10)
            assert not thread.is_alive(), "stop waited for the agent's decision"
        finally:
            agent.release.set()
            thread.join(30)
    assert results[0].end_reason == "interrupted" and results[0].steps_used == 2
    with EpisodeReader(tmp_path / "e.h5") as episode:
        assert episode.step_count == 2 and episode.result["end_reason"] == "interrupted"
