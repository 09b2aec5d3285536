"""The paper's tables from a run folder's results.jsonl: success rates, IM metrics, failures, correlation.

`build_report` is the one computation behind `python main.py report` and the studio's Results view;
`write_report` renders it as markdown, CSV tables and a scatter image, `write_long_csv` as one tidy CSV.
Failure categories come from human labels where they exist (rule: core/analysis/taxonomy.py).
"""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from statistics import mean
from typing import Any

import cv2
import numpy as np

from core.analysis.outcome import earned, human_assisted
from core.analysis.rescore import rescore_rows
from core.analysis.stats import correlation, describe_correlation
from core.analysis.taxonomy import AUTO, HUMAN, TAXONOMY, EpisodeCategory, categorise
from core.episode.metrics import AWARENESS_CLASSES, METRICS_VERSION
from core.session import run_folder
from core.session.free_play import UNJUDGED_WHY

TASK_CATEGORIES = ("navigation", "interaction", "mixed")
GRANULARITIES = ("visual_guided", "step_guided", "goal_only")
# Every aggregation is named (docs/metrics.md#aggregation): "mean of episodes" averages each episode's own value;
# "pooled" counts over all spans of all episodes; "longest" is the true maximum over the episodes.
METRICS = ("avg_successful_steps", "im_rate", "im_rate_physical", "dialogue_moves", "max_consecutive_im",
           "max_consecutive_im_longest", "recovery_rate", "recovery_rate_pooled", "action_entropy_bits")
METRIC_LABELS = {
    "avg_successful_steps": "avg successful steps", "im_rate": "IM rate (mean of episodes)",
    "im_rate_physical": "IM rate, dialogue moves left out", "dialogue_moves": "dialogue moves per episode",
    "max_consecutive_im": "max consecutive IMs (mean of episodes)", "max_consecutive_im_longest":
        "max consecutive IMs (longest)", "recovery_rate": "recovery rate (mean of episodes)",
    "recovery_rate_pooled": "recovery rate (pooled spans)", "action_entropy_bits": "action entropy (bits)"}
PERCENT_METRICS = ("im_rate", "im_rate_physical", "recovery_rate", "recovery_rate_pooled")
SPAN_COUNTS = ("deadlock_spans", *(f"spans_{name}" for name in AWARENESS_CLASSES), "spans_from_human_labels")
# The unit each IM-rate/success-rate point stands for. "task": one agent on one task at one granularity,
# its trials pooled (the default: success rates over trials, n = tasks x granularities x agents);
# "episode": every episode (success is 0 or 1, a point-biserial r); "setting": agent x granularity x
# task category (few points: fine for a plot, weak for a test).
CORRELATION_UNITS = ("task", "episode", "setting")
UNIT_WORDS = {"task": "agent, task and granularity (its trials pooled)", "episode": "episode",
              "setting": "agent, granularity and task category"}
REQUIRED_KEYS = ("granularity", "category")
RUN_HINT = "choose a folder written by `python main.py run --out FOLDER`"


class ReportError(Exception):
    """The folder cannot be reported on; the message says why and what to do."""


def agent_of(row: dict[str, Any]) -> str:
    """The agent a row counts for. Runs with sound are another condition (`--audio clip | spectrogram`): the mode
    is part of the name, so no table ever pools episodes with and without sound into one cell."""
    name = str(row["agent_spec"] if "agent_spec" in row else row["agent"])
    mode = row.get("audio_mode") or "none"
    return name if mode == "none" else f"{name} +audio:{mode}"


def load_results(folder: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """The complete rows of results.jsonl, and a warning for each line skipped. Raises ReportError."""
    path = folder / run_folder.RESULTS
    if not folder.is_dir():
        raise ReportError(f"{folder} is not a folder; {RUN_HINT}")
    if not path.is_file() and not (folder / run_folder.ERRORS).is_file():
        raise ReportError(f"{folder} has no results.jsonl; {RUN_HINT}, or run one: python main.py run --out {folder}")
    try:
        numbered, bad = run_folder.read_numbered_rows(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportError(f"cannot read {path} ({exc}); check its permissions or restore it from a backup") from exc
    rows: list[dict[str, Any]] = []
    for number, row in numbered:
        if any(k not in row for k in REQUIRED_KEYS) or not ("agent_spec" in row or "agent" in row):
            bad.append(number)
        else:
            rows.append(row)
    warnings = [f"{path}:{number} is not a complete result line (a crash mid-write?); skipped. Rerun the same "
                "`python main.py run` command to redo that episode." for number in sorted(bad)]
    return rows, warnings


def _rate(rows: Sequence[dict[str, Any]]) -> float | None:
    return sum(earned(r) for r in rows) / len(rows) if rows else None


HUMAN_ASSISTED_NOTE = (
    "A success counts when the evaluator judged the condition met at the end of one of the agent's own steps; a "
    "push never ends an episode. A success met on a human's step (someone drove in the studio) is not the agent's: "
    "it counts as a failure in the rates, the column `human-assisted` counts it, and the failure taxonomy files it as "
    "a Human-assisted success (docs/metrics.md).")


def format_value(value: float | None, percent: bool = False) -> str:
    """How the report (markdown and the studio) shows a number: '-' for none, percent to 0.1."""
    if value is None:
        return "-"
    return f"{100 * value:.1f}%" if percent else f"{value:.2f}"


def _metric(rows: Sequence[dict[str, Any]], name: str) -> float | None:
    values = [r["metrics"][name] for r in rows if r.get("metrics") and r["metrics"].get(name) is not None]
    return mean(values) if values else None


def _failures(agent: str, labelled: Sequence[EpisodeCategory]) -> tuple[dict[str, Any], dict[str, dict[str, int]]]:
    sources = {c: {HUMAN: 0, AUTO: 0} for c in TAXONOMY}
    for item in labelled:
        sources[item.category][item.source] += 1
    row = {"agent": agent, **{c: sum(sources[c].values()) for c in TAXONOMY},
           "from_human": sum(s[HUMAN] for s in sources.values()), "automatic": sum(s[AUTO] for s in sources.values())}
    return row, sources


def _span_counts(rows: Sequence[dict[str, Any]], labelled: Sequence[EpisodeCategory]) -> dict[str, int]:
    """Deadlock spans by awareness: a human's span labels where an annotator classified the episode's spans
    (counted in `spans_from_human_labels` too), the agent's own self-assessments otherwise."""
    counts = dict.fromkeys(SPAN_COUNTS, 0)
    for row, category in zip(rows, labelled):
        metrics: dict[str, Any] = row.get("metrics") or {}
        by_class: Mapping[str, int]
        if category.spans is not None:
            by_class, spans = category.spans, sum(category.spans.values())
            counts["spans_from_human_labels"] += spans
        else:
            by_class = metrics.get("spans_by_awareness") or {}
            spans = len(metrics.get("deadlocks") or [])
        counts["deadlock_spans"] += spans
        for name in AWARENESS_CLASSES:
            counts[f"spans_{name}"] += int(by_class.get(name, 0))
    return counts


def _movement_metrics(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The movement columns of one agent x granularity, each aggregated as METRIC_LABELS says."""
    scored = [r["metrics"] for r in rows if r.get("metrics")]
    spans: list[dict[str, Any]] = [span for m in scored for span in m.get("deadlocks") or ()]
    longest = [int(m["max_consecutive_im"]) for m in scored if m.get("max_consecutive_im") is not None]
    dialogue = [int(m["dialogue_moves"]) for m in scored if m.get("dialogue_moves") is not None]
    return {
        "im_rate": _metric(rows, "im_rate"), "im_rate_physical": _metric(rows, "im_rate_physical"),
        "dialogue_moves": mean(dialogue) if dialogue else None,
        "max_consecutive_im": _metric(rows, "max_consecutive_im"),
        "max_consecutive_im_longest": max(longest) if longest else None,
        "recovery_rate": _metric(rows, "recovery_rate"),
        "recovery_rate_pooled": sum(bool(s.get("recovered")) for s in spans) / len(spans) if spans else None,
        "action_entropy_bits": _metric(rows, "action_entropy_bits"),
        # No movement action: no IM rate (not a perfect 0%); left out of the IM means and the correlation.
        "episodes_without_moves": sum(1 for m in scored if m.get("im_rate") is None),
    }


def _unit_key(row: dict[str, Any], unit: str) -> tuple[str, ...]:
    if unit == "episode":
        return (agent_of(row), row["granularity"], str(row.get("key") or id(row)))
    if unit == "setting":
        return (agent_of(row), row["granularity"], row["category"])
    return (agent_of(row), row["granularity"], str(row.get("task_id", "?")))


def correlation_points(rows: Sequence[dict[str, Any]], unit: str = "task") -> list[dict[str, Any]]:
    """IM rate and success rate per unit (CORRELATION_UNITS). Episodes without metrics (infrastructure
    errors) are not results and are left out."""
    if unit not in CORRELATION_UNITS:
        raise ReportError(f"correlation unit must be one of {', '.join(CORRELATION_UNITS)}, got {unit!r}")
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for row in rows:
        if row.get("end_reason") == "error" or not row.get("metrics"):
            continue
        groups.setdefault(_unit_key(row, unit), []).append(row)
    points: list[dict[str, Any]] = []
    for (agent, granularity, what), members in groups.items():
        members = [r for r in members if r["metrics"].get("im_rate") is not None]  # no moves: no rate
        im = _metric(members, "im_rate")
        if im is None:
            continue
        points.append({"agent": agent, "granularity": granularity, "category": members[0]["category"],
                       "unit": what, "im_rate": im, "success_rate": _rate(members) or 0.0,
                       "episodes": len(members),
                       "trajectories": sorted(str(r.get("trajectory_digest") or "") for r in members)})
    return points


def duplicate_warnings(points: Sequence[dict[str, Any]]) -> list[str]:
    """A warning when correlation points are made of the very same trajectories (equal digests): such points are
    one observation counted several times, not independent ones (a seed shared by tasks with one start)."""
    undigested = sum(1 for point in points for digest in point.get("trajectories") or () if not digest)
    missing = ([f"{undigested} episode(s) have no trajectory digest (written before digests were recorded), so "
                "duplicate trajectories among them cannot be told; `python main.py report DIR --rescore` computes "
                "them from the episode files"] if undigested else [])
    seen: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for point in points:
        digests = tuple(point.get("trajectories") or ())
        if digests and all(digests):
            seen.setdefault(digests, []).append(point)
    repeated = [group for group in seen.values() if len(group) > 1]
    if not repeated:
        return missing
    names = "; ".join(" = ".join(f"{p['unit']} ({p['granularity']})" for p in group) for group in repeated[:5])
    count = sum(len(group) - 1 for group in repeated)
    return [f"{count} correlation point(s) repeat another point's trajectories exactly (the same actions and "
            f"positions), so they are not independent: {names}. Episodes of this version get a seed of their own "
            "per task, granularity and trial; rerun the episodes of older runs to correct it", *missing]


def correlations(points: Sequence[dict[str, Any]], unit: str) -> dict[str, Any]:
    """r(IM rate, SR) overall, per granularity and per agent, each with n, p and a bootstrap 95% CI."""
    def of(subset: Sequence[dict[str, Any]]) -> dict[str, Any]:
        return correlation(*_xy(subset)).to_json()

    return {"unit": unit, "overall": of(points),
            "by_granularity": {g: of([p for p in points if p["granularity"] == g]) for g in GRANULARITIES
                               if any(p["granularity"] == g for p in points)},
            "by_agent": {a: of([p for p in points if p["agent"] == a]) for a in sorted({p["agent"] for p in points})}}


def build_report(folder: Path | str, correlation_unit: str = "task", rescore: bool = False) -> dict[str, Any]:
    """Every number of the report, JSON-serialisable. Raises ReportError when there is nothing to read.
    With `rescore`, every episode's metrics are recomputed from its file with today's definitions."""
    folder = Path(folder)
    rows, warnings = load_results(folder)
    # Infrastructure errors are not results: kept out of every table and denominator, counted apart.
    errors = [_error_summary(r) for r in run_folder.unresolved_errors(folder, rows)]
    rows = [r for r in rows if not run_folder.is_error(r)]
    # Free play on a game with no memory profile: nothing judged it, so it is no success and no failure either.
    unjudged = [r for r in rows if run_folder.is_unjudged(r)]
    rows = [r for r in rows if not run_folder.is_unjudged(r)]
    if rescore:
        rows, rescore_warnings = rescore_rows(folder, rows)
        warnings += rescore_warnings
    main = [r for r in rows if not r.get("privileged")]
    privileged = [r for r in rows if r.get("privileged")]
    labelled, label_warnings = categorise(folder, main)
    agents = sorted({agent_of(r) for r in main})
    sr_rows: list[dict[str, Any]] = []
    metric_rows: list[dict[str, Any]] = []
    failure_rows: list[dict[str, Any]] = []
    failure_sources: dict[str, dict[str, dict[str, int]]] = {}
    category_of = {id(r): c for r, c in zip(main, labelled)}
    for agent in agents:
        mine = [r for r in main if agent_of(r) == agent]
        for granularity in GRANULARITIES:
            subset = [r for r in mine if r["granularity"] == granularity]
            if not subset:
                continue
            settings = {c: [r for r in subset if r["category"] == c] for c in TASK_CATEGORIES}
            sr_rows.append({"agent": agent, "granularity": granularity,
                            **{c: _rate(settings[c]) for c in TASK_CATEGORIES}, "overall": _rate(subset),
                            "episodes": len(subset), **{f"n_{c}": len(settings[c]) for c in TASK_CATEGORIES},
                            "human_assisted": sum(human_assisted(r) for r in subset)})
            steps = [r["success_step"] for r in subset if earned(r) and r.get("success_step") is not None]
            metric_rows.append({"agent": agent, "granularity": granularity,
                                "avg_successful_steps": mean(steps) if steps else None,
                                **_movement_metrics(subset),
                                **_span_counts(subset, [category_of[id(r)] for r in subset])})
        row, failure_sources[agent] = _failures(agent, [c for r, c in zip(main, labelled) if agent_of(r) == agent])
        failure_rows.append(row)
    points = correlation_points(main, correlation_unit)
    warnings += duplicate_warnings(points)
    without_moves = sum(1 for r in main if r.get("metrics") and r["metrics"].get("im_rate") is None)
    if without_moves:
        warnings.append(f"{without_moves} episode(s) made no movement action, so they have no IM rate (not 0%): "
                        "they are left out of the IM means and the correlation points")
    outdated = sum(1 for r in main if r.get("metrics") and
                   int(r["metrics"].get("metrics_version", 1)) < METRICS_VERSION)
    if outdated:
        warnings.append(f"{outdated} episode(s) were scored by an older definition of the metrics (before "
                        f"version {METRICS_VERSION}: interventions credited to the agent, missing self-assessments "
                        "counted as Unaware, moves in dialogues counted as deadlocks, an absolute ε for continuous "
                        "moves); rescore them from their episode files with `python main.py report "
                        f"{folder} --rescore`")
    return {"folder": str(folder), "rescored": rescore, "sr": sr_rows, "metrics": metric_rows, "failures": failure_rows,
            "failure_sources": failure_sources, "disputed": sum(c.disputed for c in labelled), "points": points,
            "correlation": correlations(points, correlation_unit), "episodes": len(main),
            "privileged_episodes": len(privileged), "infrastructure_errors": errors,
            "unjudged": unjudged_summary(unjudged),
            "warnings": warnings + label_warnings}

def unjudged_summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """How many episodes nothing judged, by agent and by why (today always "no memory profile")."""
    reasons = Counter(str(r.get("unjudged") or UNJUDGED_WHY) for r in rows)
    return {"episodes": len(rows), "by_agent": dict(Counter(agent_of(r) for r in rows)), "reasons": dict(reasons)}


def unjudged_line(report: dict[str, Any]) -> str:
    """"3 unjudged (no memory profile)", or "" when every episode was judged."""
    counts: Mapping[str, Any] = report.get("unjudged") or {}
    episodes = int(counts.get("episodes") or 0)
    if not episodes:
        return ""
    reasons: Mapping[str, int] = counts.get("reasons") or {UNJUDGED_WHY: episodes}
    return f"{episodes} unjudged ({', '.join(sorted(reasons))})"


def _error_summary(row: dict[str, Any]) -> dict[str, Any]:
    error = str(row.get("error") or "unknown error")
    return {"key": row.get("key"), "end_reason": row.get("end_reason"),
            "agent": agent_of(row) if ("agent_spec" in row or "agent" in row) else "?",
            "task_id": row.get("task_id"), "granularity": row.get("granularity"), "error": error.splitlines()[0]}


def errors_text(errors: Sequence[dict[str, Any]], shown: int = 10) -> str:
    """The report's section on infrastructure errors (empty when there are none)."""
    if not errors:
        return ""
    broken = [e for e in errors if e.get("end_reason") == run_folder.TASK_ERROR]
    infrastructure = [e for e in errors if e.get("end_reason") != run_folder.TASK_ERROR]
    lines: list[str] = []
    if infrastructure:
        lines += [f"{len(infrastructure)} episode(s) ended in an infrastructure error (the game or the evaluator "
                  "died, or the model API failed for good). They are not results and are in none of the tables "
                  "above; run the same `python main.py run` command again to retry them.", ""]
    if broken:
        lines += [f"{len(broken)} episode(s) could not run because their task is broken (its success condition "
                  "already holds at its start state, so it asks for nothing). They are not results and are not "
                  "retried: fix the task file (`python main.py tasks validate FILE --drive` says what is wrong).", ""]
    lines += [f"- {e['key']}: {e['error']}" for e in (infrastructure + broken)[:shown]]
    if len(errors) > shown:
        lines.append(f"- ... and {len(errors) - shown} more (errors.jsonl has every one)")
    return "\n".join(lines)


def _xy(points: Sequence[dict[str, Any]]) -> tuple[list[float], list[float]]:
    return [p["im_rate"] for p in points], [p["success_rate"] for p in points]


def _markdown(headers: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


GRANULARITY_SHORT = {"visual_guided": "Visual", "step_guided": "Step", "goal_only": "Goal"}
CATEGORY_SHORT = {"navigation": "Nav", "interaction": "Int", "mixed": "Mix"}


def correlation_text(values: dict[str, Any]) -> str:
    """What the report, the HTML report and the studio's Results caption say of one correlation."""
    return describe_correlation(values)


def paper_table(report: dict[str, Any]) -> str:
    """Success rates in the paper's layout: one row per agent, granularities side by side, each split by
    task category plus its average."""
    headers = ["agent"] + [f"{GRANULARITY_SHORT[g]} {label}" for g in GRANULARITIES
                           for label in (*CATEGORY_SHORT.values(), "Avg")]
    return _markdown(headers, paper_rows(report))


def paper_rows(report: dict[str, Any]) -> list[list[str]]:
    """The paper table's cells: per agent, each granularity's category success rates and their average."""
    by_agent: dict[str, dict[str, dict[str, Any]]] = {}
    for row in report["sr"]:
        by_agent.setdefault(row["agent"], {})[row["granularity"]] = row
    rows: list[list[str]] = []
    for agent, granularities in by_agent.items():
        cells = [agent]
        for g in GRANULARITIES:
            row = granularities.get(g)
            cells += [format_value(row[c], True) if row else "-" for c in TASK_CATEGORIES]
            cells.append(format_value(row["overall"], True) if row else "-")
        rows.append(cells)
    return rows


MOVEMENT_NOTE = (
    "Deadlock spans are classified by a human's span labels where an annotator classified the episode's spans "
    "(the last column counts those), and otherwise by what the agent said during them: aware (it said stuck), "
    "unaware (it mostly said progressing) or unclassified (its self-assessments were missing, unreadable or "
    "unsure; left for a human label). Moves made while a dialogue box was open never form a deadlock; the IM "
    "rate counts them (the benchmark's definition) and the next column leaves them out. Means of episodes "
    "average each episode's own value; pooled and longest count over all spans and episodes; episodes with no "
    "movement action have no IM rate and are left out of it. See docs/metrics.md.")


def movement_table(report: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The movement metrics' headers and cells, as report.md and the HTML report show them."""
    headers = ["agent", "granularity", *(METRIC_LABELS[name] for name in METRICS), "deadlock spans", "aware",
               "unaware", "unclassified", "of them from human labels"]
    rows = [[r["agent"], r["granularity"], *(_metric_cell(name, r[name]) for name in METRICS),
             *(str(r[name]) for name in SPAN_COUNTS)] for r in report["metrics"]]
    return headers, rows


def _metric_cell(name: str, value: float | None) -> str:
    """A movement metric as shown: percentages to 0.1, counts (the longest run of IMs) whole, the rest to 0.01."""
    if name == "max_consecutive_im_longest" and value is not None:
        return str(int(value))
    return format_value(value, name in PERCENT_METRICS)


NOTHING_JUDGED = ("No episode here was judged, so there is no table: success rates, movement metrics and the "
                  "correlation need positions read from the game's memory. Make the game's memory profile "
                  "(`python main.py memory find-position --backend FILE`, then `memory signature --backend FILE "
                  "--out PROFILE`; docs/finding-memory.md) and run its tasks.")


def write_report(folder: Path, report: dict[str, Any]) -> str:
    sr = _markdown(["agent", "granularity", *TASK_CATEGORIES, "overall", "episodes", "human-assisted"],
                   [[r["agent"], r["granularity"], *(format_value(r[c], True) for c in TASK_CATEGORIES),
                     format_value(r["overall"], True), str(r["episodes"]), str(r.get("human_assisted", 0))]
                    for r in report["sr"]])
    assisted = sum(int(r.get("human_assisted", 0)) for r in report["sr"])
    metrics = _markdown(*movement_table(report))
    failures = _markdown(["agent", *TAXONOMY, "from human labels", "automatic"],
                         [[r["agent"], *(str(r[k]) for k in (*TAXONOMY, "from_human", "automatic"))]
                          for r in report["failures"]])
    found = report["correlation"]
    unit = found["unit"]
    per_granularity = [f"- {g}: {correlation_text(v)}" for g, v in found["by_granularity"].items()]
    per_agent = [f"- {a}: {correlation_text(v)}" for a, v in found["by_agent"].items()]
    errors = report["infrastructure_errors"]
    unjudged = unjudged_line(report)
    opening = (f"{report['episodes']} episodes "
               f"({report['privileged_episodes']} privileged driver episodes are kept out of every table)."
               + (f" {len(errors)} episode(s) that ended in an infrastructure error are not results; they are "
                  "counted apart, at the end." if errors else "")
               + (f" {unjudged}: free play recorded with nothing to judge it (memory_profile: none), neither a "
                  "success nor a failure, in no table." if unjudged else ""))
    if unjudged and not report["episodes"]:  # free play only: no table would have a row
        text = "\n\n".join(["# PokeGym run report", opening, NOTHING_JUDGED,
                             *(["## Infrastructure errors (not results)", errors_text(errors)] if errors else [])]
                            ) + "\n" + _warnings_section(report["warnings"])
        (folder / "report.md").write_text(text)
        return text
    text = "\n\n".join([
        "# PokeGym run report", opening,
        "## Success rate (the paper's layout)", paper_table(report),
        HUMAN_ASSISTED_NOTE
        + (f" {assisted} success(es) were met on a human's step in the studio here." if assisted else ""),
        "## Success rate by granularity and category", sr,
        "## Movement metrics",
        MOVEMENT_NOTE, metrics,
        "## Failure taxonomy (human labels where confirmed, automatic suggestions otherwise)", failures,
        f"Episodes whose annotators disagree: {report['disputed']} (the most common confirmed category is used).",
        "## Ineffective moves versus success",
        f"Pearson r between IM rate and success rate, one point per {UNIT_WORDS.get(unit, unit)} "
        f"({len(report['points'])} points): {correlation_text(found['overall'])}.",
        "Per granularity:\n" + ("\n".join(per_granularity) or "- none"),
        "Per agent:\n" + ("\n".join(per_agent) or "- none"),
        "![IM rate vs success rate](im_vs_sr.png)",
        *(["## Infrastructure errors (not results)", errors_text(errors)] if errors else []),
    ]) + "\n" + _warnings_section(report["warnings"])
    (folder / "report.md").write_text(text)
    for name, rows in (("success_rates", report["sr"]), ("metrics", report["metrics"]),
                       ("failures", report["failures"])):  # CSV columns: the JSON keys (docs/run-folder.md)
        if rows:
            with (folder / f"{name}.csv").open("w", newline="") as handle:
                writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
                writer.writeheader()
                writer.writerows(rows)
    _scatter(folder / "im_vs_sr.png", report["points"], found["overall"])
    return text


def _warnings_section(warnings: Sequence[str]) -> str:
    """Damaged episode files and skipped lines, each with its reason, so report.md itself says what it left out."""
    if not warnings:
        return ""
    return "\n## Left out or read with warnings\n\n" + "\n".join(f"- {warning}" for warning in warnings) + "\n"


LONG_COLUMNS: tuple[str, ...] = ("table", "agent", "granularity", "category", "measure", "value")


def long_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Every number of the report as one tidy table (None stays None): what the studio exports as CSV."""
    out: list[dict[str, Any]] = []

    def add(table: str, agent: str, granularity: str, category: str, measure: str, value: Any) -> None:
        out.append(dict(zip(LONG_COLUMNS, (table, agent, granularity, category, measure, value))))

    for r in report["sr"]:
        for c in TASK_CATEGORIES:
            add("success_rate", r["agent"], r["granularity"], c, "success_rate", r[c])
            add("success_rate", r["agent"], r["granularity"], c, "episodes", r[f"n_{c}"])
        add("success_rate", r["agent"], r["granularity"], "all", "success_rate", r["overall"])
        add("success_rate", r["agent"], r["granularity"], "all", "episodes", r["episodes"])
        add("success_rate", r["agent"], r["granularity"], "all", "human_assisted", r.get("human_assisted", 0))
    for r in report["metrics"]:
        for name in (*METRICS, "episodes_without_moves", *SPAN_COUNTS):
            add("metrics", r["agent"], r["granularity"], "all", name, r[name])
    for agent, sources in report["failure_sources"].items():
        for category, counts in sources.items():
            add("failure_taxonomy", agent, "all", category, "from_human", counts[HUMAN])
            add("failure_taxonomy", agent, "all", category, "automatic", counts[AUTO])
    for p in report["points"]:
        for name in ("im_rate", "success_rate", "episodes"):
            add("im_vs_sr", p["agent"], p["granularity"], p["category"], name, p[name])
    found = report["correlation"]
    scopes = [("all", "all", found["overall"])] + [("all", g, v) for g, v in found["by_granularity"].items()]
    scopes += [(a, "all", v) for a, v in found["by_agent"].items()]
    for agent, granularity, values in scopes:
        for measure in ("r", "n", "p_value", "fisher95_low", "fisher95_high", "ci95_low", "ci95_high"):
            add("im_vs_sr", agent, granularity, f"unit:{found['unit']}", f"pearson_{measure}", values[measure])
    for agent in sorted({e["agent"] for e in report["infrastructure_errors"]}):
        count = sum(e["agent"] == agent for e in report["infrastructure_errors"])
        add("infrastructure_errors", agent, "all", "all", "episodes", count)
    unjudged: Mapping[str, Any] = report.get("unjudged") or {}
    by_agent: Mapping[str, int] = unjudged.get("by_agent") or {}
    for agent in sorted(by_agent):
        add("unjudged", agent, "all", "all", "episodes", by_agent[agent])
    return out


def write_long_csv(path: Path, report: dict[str, Any]) -> None:
    with Path(path).open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(LONG_COLUMNS))
        writer.writeheader()
        writer.writerows({k: ("" if v is None else v) for k, v in row.items()} for row in long_rows(report))


def _scatter(path: Path, points: list[dict[str, Any]], overall: dict[str, Any]) -> None:
    cv2.imwrite(str(path), scatter_image(points, overall))


def scatter_image(points: list[dict[str, Any]], overall: dict[str, Any]) -> np.ndarray:
    """The IM rate / success rate scatter as a BGR image (report.md's im_vs_sr.png, the HTML report's figure)."""
    size, margin = 480, 60
    image = np.full((size, size, 3), 255, np.uint8)
    plot = size - 2 * margin
    cv2.rectangle(image, (margin, margin), (size - margin, size - margin), (0, 0, 0), 1)
    for tick in range(0, 101, 25):
        x = margin + plot * tick // 100
        y = size - margin - plot * tick // 100
        cv2.putText(image, f"{tick}%", (x - 12, size - margin + 18), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (0, 0, 0), 1)
        cv2.putText(image, f"{tick}%", (8, y + 4), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (0, 0, 0), 1)
    cv2.putText(image, "ineffective-move rate", (size // 2 - 80, size - 15), cv2.FONT_HERSHEY_SIMPLEX, 0.5,
                (0, 0, 0), 1)
    cv2.putText(image, "success rate", (8, margin - 20), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 0, 0), 1)
    r_value, p_value = overall.get("r"), overall.get("p_value")
    title = f"Pearson r = {r_value:.2f}, n = {overall.get('n', 0)}" if r_value is not None else "Pearson r undefined"
    if p_value is not None:
        title += ", p < 0.001" if p_value < 0.001 else f", p = {p_value:.3f}"
    cv2.putText(image, title, (margin, 25), cv2.FONT_HERSHEY_SIMPLEX, 0.55, (0, 0, 0), 1, cv2.LINE_AA)
    colours = {"visual_guided": (200, 90, 30), "step_guided": (40, 150, 40), "goal_only": (40, 40, 200)}  # BGR
    for index, (granularity, colour) in enumerate(colours.items()):
        cv2.circle(image, (size - margin - 120, margin + 14 + 16 * index), 5, colour, -1, cv2.LINE_AA)
        cv2.putText(image, granularity, (size - margin - 110, margin + 18 + 16 * index), cv2.FONT_HERSHEY_SIMPLEX,
                    0.4, (0, 0, 0), 1, cv2.LINE_AA)
    for point in points:
        x = int(margin + plot * min(max(point["im_rate"], 0.0), 1.0))
        y = int(size - margin - plot * min(max(point["success_rate"], 0.0), 1.0))
        cv2.circle(image, (x, y), 5, colours.get(point["granularity"], (120, 120, 120)), -1, cv2.LINE_AA)
    return image
