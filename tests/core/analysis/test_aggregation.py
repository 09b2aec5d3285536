"""How the report aggregates across episodes (docs/metrics.md#aggregation), on hand-made result rows whose
answers were worked out by hand: pooled against mean-of-episodes, episodes without moves, successes a human
met, duplicate trajectories, human span labels, and small samples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.analysis.report import build_report, write_report
from core.labels.model import AnnotatorLabels, DeadlockLabel
from core.labels.store import read_labels, save_labels
from tests.core.labels.test_labels import make_episode


def span(recovered: bool, start: int = 1) -> dict[str, Any]:
    return {"start": start, "end": start + 2, "recovered": recovered, "ended_by": "agent" if recovered else None,
            "awareness": "aware", "awareness_step": start + 1, "interventions": 0}


def row(task: str, success: bool = False, im_rate: float | None = 0.5, spans: tuple[dict, ...] = (),
        longest: int = 0, source: str | None = None, digest: str = "", granularity: str = "goal_only",
        episode: str | None = None) -> dict[str, Any]:
    recovered = [s["recovered"] for s in spans]
    return {"task_id": task, "granularity": granularity, "category": "navigation", "agent": "random",
            "agent_spec": "random", "success": success, "success_source": source if success else None,
            "success_step": 10 if success else None, "end_reason": "success" if success else "budget",
            "failure_category_suggestion": "Success" if success else "Lost", "trajectory_digest": digest,
            "key": f"{task}__{granularity}__{digest or id(spans)}", "episode": episode,
            "metrics": {"metrics_version": 3, "im_rate": im_rate, "im_rate_physical": im_rate,
                        "dialogue_moves": 0, "max_consecutive_im": longest, "deadlocks": list(spans),
                        "recovery_rate": sum(recovered) / len(recovered) if recovered else None,
                        "spans_by_awareness": {"aware": len(spans), "unaware": 0, "unclassified": 0},
                        "action_entropy_bits": 1.0}}


def folder_with(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return tmp_path


def metrics_of(report: dict[str, Any]) -> dict[str, Any]:
    (metrics,) = report["metrics"]
    return metrics


def test_recovery_and_the_longest_run_are_shown_pooled_and_as_means(tmp_path):
    # One episode recovered 1 of 1 span, the other 0 of 3: per-episode ratios average to 0.50, the pooled spans
    # give 1 of 4 = 0.25. Their longest runs are 3 and 11: the mean is 7, the true maximum 11.
    rows = [row("q01_a", spans=(span(True),), longest=3),
            row("q01_b", spans=(span(False, 1), span(False, 5), span(False, 9)), longest=11)]
    report = build_report(folder_with(tmp_path, rows))
    metrics = metrics_of(report)
    assert metrics["recovery_rate"] == pytest.approx(0.5) and metrics["recovery_rate_pooled"] == pytest.approx(0.25)
    assert metrics["max_consecutive_im"] == pytest.approx(7) and metrics["max_consecutive_im_longest"] == 11
    text = write_report(tmp_path, report)
    assert "recovery rate (mean of episodes)" in text and "recovery rate (pooled spans)" in text
    assert "max consecutive IMs (mean of episodes)" in text and "max consecutive IMs (longest)" in text
    assert "| 50.0% | 25.0% |" in text
    assert "| 7.00 | 11 |" in text  # the mean of the episodes' longest runs, and the longest run itself (a count)


def test_an_episode_without_moves_is_left_out_of_the_im_rate_and_the_correlation(tmp_path):
    rows = [row("q01_a", im_rate=0.2), row("q01_a", im_rate=None), row("q02_a", im_rate=0.6, success=True,
                                                                          source="agent")]
    report = build_report(folder_with(tmp_path, rows))
    metrics = metrics_of(report)
    assert metrics["im_rate"] == pytest.approx(0.4) and metrics["episodes_without_moves"] == 1  # not (0.2+0+0.6)/3
    q01 = next(p for p in report["points"] if p["unit"] == "q01_a")
    assert q01["episodes"] == 1 and q01["im_rate"] == pytest.approx(0.2)  # the no-move episode is no point
    assert any("1 episode(s) made no movement action" in w for w in report["warnings"])


def test_a_success_a_human_met_is_not_the_agents(tmp_path):
    rows = [row("q01_a", success=True, source="agent"), row("q01_a", success=True, source="human"),
            row("q01_a"), row("q01_a", success=True)]  # the last: a row from before success_source (the agent's)
    report = build_report(folder_with(tmp_path, rows))
    (sr,) = report["sr"]
    assert sr["overall"] == pytest.approx(0.5) and sr["human_assisted"] == 1
    text = write_report(tmp_path, report)
    assert "1 success(es) were met on a human's step" in text and "| human-assisted |" in text
    # The failure taxonomy files it apart too: 2 agent successes, 1 human-assisted, 1 lost.
    (failures,) = report["failures"]
    assert (failures["Success"], failures["Human-assisted success"], failures["Lost"]) == (2, 1, 1)
    # So does the HTML report: its per-task table counts the agent's successes only.
    from core.export.html_report import build_html

    page = build_html(tmp_path, report)
    assert "<th>human-assisted</th>" in page and "Human-assisted success ×1" in page
    per_task = page[page.index('id="tasks"'):]
    assert "<td>4</td><td>2</td><td>50.0%</td>" in per_task  # 4 episodes, 2 earned successes


def test_points_made_of_the_same_trajectories_are_reported_as_duplicates(tmp_path):
    # Two tasks sharing a start state, played with one seed: the same steps, the same end positions.
    rows = [row("q02_nav", digest="aaaa"), row("q07_int", digest="aaaa"), row("q09_nav", digest="bbbb")]
    report = build_report(folder_with(tmp_path, rows))
    (warning,) = [w for w in report["warnings"] if "not independent" in w]
    assert "1 correlation point(s) repeat" in warning and "q02_nav" in warning and "q07_int" in warning
    fresh = build_report(folder_with(tmp_path, [row("q02_nav", digest="aaaa"), row("q07_int", digest="cccc")]))
    assert not any("not independent" in w for w in fresh["warnings"])


def test_the_caption_says_when_n_is_too_small_to_conclude(tmp_path):
    rows = [row(f"q0{i}_a", im_rate=i / 10, success=i % 2 == 0, source="agent", digest=f"d{i}") for i in range(1, 5)]
    report = build_report(folder_with(tmp_path, rows))
    assert report["correlation"]["overall"]["too_small"] and report["correlation"]["overall"]["n"] == 4
    text = write_report(tmp_path, report)
    assert "n too small to conclude" in text and "Fisher 95% CI" in text
    assert "one point per agent, task and granularity (its trials pooled) (4 points)" in text


def test_a_human_span_label_changes_the_awareness_counts_and_says_so(tmp_path):
    episode = tmp_path / "episodes" / "e.h5"
    episode.parent.mkdir()
    make_episode(episode, steps=8, deadlocks=())
    rows = [row("q01_a", spans=(span(False, 1), span(False, 4)), episode="episodes/e.h5")]
    before = metrics_of(build_report(folder_with(tmp_path, rows)))
    assert (before["spans_aware"], before["spans_unaware"], before["spans_from_human_labels"]) == (2, 0, 0)
    # the agent said "stuck" (aware by its words); the annotator judges it did not know: the human label counts
    labelled = (DeadlockLabel(1, 3, "unaware"), DeadlockLabel(4, 6, "unaware"))
    save_labels(episode, AnnotatorLabels("alice", spans=labelled))
    assert read_labels(episode).annotators["alice"].spans[0].kind == "unaware"
    after = metrics_of(build_report(folder_with(tmp_path, rows)))
    assert (after["spans_aware"], after["spans_unaware"], after["spans_from_human_labels"]) == (0, 2, 2)


def test_a_broken_task_is_reported_apart_from_infrastructure_errors(tmp_path):
    from core.analysis.report import errors_text
    from core.session.run_folder import is_error

    broken = {**row("q09_met"), "end_reason": "task_error", "key": "q09_met__goal_only__0",
              "error": "the task q09_met's success condition already holds at its start state"}
    died = {**row("q01_a"), "end_reason": "error", "key": "q01_a__goal_only__0", "error": "the world died"}
    assert is_error(broken) and is_error(died)  # neither is a result
    (tmp_path / "errors.jsonl").write_text(json.dumps(broken) + "\n" + json.dumps(died) + "\n")
    report = build_report(folder_with(tmp_path, [row("q01_b")]))
    text = errors_text(report["infrastructure_errors"])
    assert "1 episode(s) ended in an infrastructure error" in text
    assert "1 episode(s) could not run because their task is broken" in text and "not retried" in text


def test_runs_with_and_without_sound_are_set_side_by_side_never_pooled(tmp_path):
    heard = [{**row("q01_a", success=True, source="agent", spans=(span(True),), digest="h1"),
              "audio_mode": "spectrogram", "audio": "on"},
             {**row("q01_a", digest="h2"), "audio_mode": "spectrogram", "audio": "on"}]
    deaf = [{**row("q01_a", spans=(span(False, 1), span(False, 5)), digest="d1"), "audio_mode": "none"},
            row("q01_a", digest="d2")]  # a row from before audio_mode: no sound
    report = build_report(folder_with(tmp_path, heard + deaf))
    rates = {r["agent"]: (r["overall"], r["episodes"]) for r in report["sr"]}
    assert rates == {"random": (0.0, 2), "random +audio:spectrogram": (0.5, 2)}
    spans = {r["agent"]: (r["spans_aware"], r["recovery_rate_pooled"]) for r in report["metrics"]}
    assert spans == {"random": (2, 0.0), "random +audio:spectrogram": (1, 1.0)}
    text = write_report(tmp_path, report)
    assert "random +audio:spectrogram" in text
