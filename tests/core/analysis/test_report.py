"""The report on a real run folder: the paper's layout, deadlock spans by awareness, the correlation with n, p
and a bootstrap interval, the paper protocol, and rescoring episodes scored by an older definition."""

from __future__ import annotations

import json

import pytest

import main
from core.agents.base import ReplayAgent
from core.analysis.report import build_report, write_report
from core.analysis.rescore import rescore_rows
from core.backends.profile import load_backend
from core.cli.run_cmd import apply_protocol
from core.episode.metrics import METRICS_VERSION, UNAWARE, UNCLASSIFIED
from core.evaluation.client import EvaluatorClient
from core.evaluation.tasks import load_task
from core.game.builtin import BuiltinWorld
from core.paths import TASKS_DIR
from core.session.batch import plan_episodes, run_batch
from core.session.runner import EpisodeRunner, RunOptions
from tests.damaged_files import flip_chunk


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory, builtin_profile):
    """Two agents: a recorded one that walks into the park fence and says nothing about itself, and a random one."""
    out = tmp_path_factory.mktemp("run")
    actions = load_backend("builtin").action_set()
    replies = ['{"action": "MoveLeft"}'] * 4 + ['{"action": "MoveForward"}'] * 8  # from park_gate into the fence
    stuck = out.parent / "stuck.h5"
    task = load_task(TASKS_DIR / "q02_badge_interaction.yaml", builtin_profile.flags)
    with BuiltinWorld.launch(renderer="software") as world, EvaluatorClient.launch(world.pid) as evaluator:
        evaluator.wait_locked()
        EpisodeRunner(world, evaluator, ReplayAgent(actions, replies), actions, task, RunOptions(step_budget=12),
                      stuck).run()
    run_batch("q02_badge_interaction", "goal", f"replay:{stuck}", 2, 2, out, RunOptions(step_budget=12),
              lambda *_: None)
    run_batch("q08_site_navigation,q04_clock_interaction", "goal", "random:3", 2, 2, out, RunOptions(step_budget=12),
              lambda *_: None)
    return out


def test_the_report_has_the_papers_layout_spans_by_awareness_and_the_correlation(run_folder):
    report = build_report(run_folder)
    text = write_report(run_folder, report)
    assert "## Success rate (the paper's layout)" in text
    assert "| agent | Visual Nav | Visual Int | Visual Mix | Visual Avg | Step Nav |" in text
    assert "| deadlock spans | aware | unaware | unclassified |" in text
    assert "Unclassified Deadlock" in text.split("## Failure taxonomy")[1]
    stuck = next(r for r in report["metrics"] if r["agent"].startswith("replay:"))
    # it never said how it was doing: its spans are unclassified, never Unaware
    assert stuck["deadlock_spans"] == 2 and stuck["spans_unclassified"] == 2 and stuck["spans_unaware"] == 0
    assert next(r for r in report["failures"] if r["agent"].startswith("replay:"))[UNCLASSIFIED] == 2
    found = report["correlation"]
    assert found["unit"] == "task" and found["overall"]["n"] == len(report["points"]) == 3  # 3 tasks, trials pooled
    assert set(found["by_granularity"]) == {"goal_only"} and "random:3" in found["by_agent"]
    assert all(p["episodes"] == 2 for p in report["points"])
    episodes = build_report(run_folder, correlation_unit="episode")
    assert episodes["correlation"]["overall"]["n"] == 6


def test_the_paper_protocol_is_every_task_granularity_and_five_trials():
    args = main.build_parser().parse_args(["run", "--protocol", "paper", "--out", "x"])
    assert apply_protocol(args) is None
    specs = plan_episodes(args.tasks, args.granularity, "random", args.trials)
    assert len(specs) == 30 * 3 * 5 and args.budget is None  # each task's own budget
    assert {s.granularity for s in specs} == {"visual_guided", "step_guided", "goal_only"}
    clash = main.build_parser().parse_args(["run", "--protocol", "paper", "--budget", "40", "--out", "x"])
    assert "leave out --budget" in apply_protocol(clash)
    # Even a flag that equals a default, or the protocol's own value, says the command chose it: refused.
    for given, flag in ((["--trials", "1"], "--trials"), (["--granularity", "goal"], "--granularity"),
                        (["--trials", "5"], "--trials"), (["--tasks", "all"], "--tasks")):
        clash = main.build_parser().parse_args(["run", "--protocol", "paper", *given, "--out", "x"])
        assert f"leave out {flag}" in apply_protocol(clash)
    plain = main.build_parser().parse_args(["run", "--out", "x"])
    assert apply_protocol(plain) is None and (plain.tasks, plain.granularity, plain.trials) == ("all", "goal", 1)


def test_older_scores_are_flagged_and_rescored_from_the_episode_files(run_folder, tmp_path):
    rows = [json.loads(line) for line in (run_folder / "results.jsonl").read_text().splitlines()]
    old = tmp_path / "old"
    (old / "episodes").mkdir(parents=True)
    digests = [row["trajectory_digest"] for row in rows]
    for row in rows:  # as metrics v1 wrote them: no version, the final span counted Unaware by default, no digest
        (old / row["episode"]).write_bytes((run_folder / row["episode"]).read_bytes())
        row["metrics"] = {k: v for k, v in row["metrics"].items() if k != "metrics_version"}
        row["failure_category_suggestion"] = UNAWARE
        del row["trajectory_digest"]
    (old / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    stale = build_report(old)
    assert any("older definition of the metrics" in w and "--rescore" in w for w in stale["warnings"])
    assert any("have no trajectory digest" in w and "--rescore" in w for w in stale["warnings"])
    assert sum(r[UNAWARE] for r in stale["failures"]) == len(rows)
    rescored = build_report(old, rescore=True)
    assert rescored["rescored"] and not any("older definition" in w for w in rescored["warnings"])
    assert not any("trajectory digest" in w for w in rescored["warnings"])  # computed from the episode files
    assert sorted(d for p in rescored["points"] for d in p["trajectories"]) == sorted(digests)
    original = build_report(run_folder)
    assert rescored["failures"] == original["failures"] and rescored["metrics"] == original["metrics"]
    assert sum(r[UNAWARE] for r in rescored["failures"]) == 0 and METRICS_VERSION == 3


def test_rescoring_keeps_the_recorded_metrics_of_an_episode_with_a_damaged_step_record(run_folder, tmp_path):
    """A step whose action is unknown cannot be scored: the file is named, and the row keeps what the run wrote."""
    rows = [json.loads(line) for line in (run_folder / "results.jsonl").read_text().splitlines()]
    folder = tmp_path / "damaged"
    (folder / "episodes").mkdir(parents=True)
    for row in rows:
        (folder / row["episode"]).write_bytes((run_folder / row["episode"]).read_bytes())
    (folder / "results.jsonl").write_text((run_folder / "results.jsonl").read_text())
    hit = rows[0]
    flip_chunk(folder / hit["episode"], "steps/record_bytes", (0,), at=4)
    rescored, warnings = rescore_rows(folder, rows)
    assert rescored[0] is rows[0] and rescored[0]["metrics"] == hit["metrics"]
    assert [w for w in warnings if hit["episode"] in w and "could not be rescored" in w and "damaged" in w]
    assert all(r["metrics"] == row["metrics"] for r, row in zip(rescored[1:], rows[1:], strict=True))
