"""The paper's tables from a run folder's results.jsonl: success rates, IM metrics, failures, correlation.

`build_report` is the one computation behind `python main.py report` and the studio's Results view;
`write_report` renders it as markdown, CSV tables and a scatter image, `write_long_csv` as one tidy CSV.
Failure categories come from human labels where they exist (rule: core/session/taxonomy.py).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path
from statistics import mean
from typing import Any

import cv2
import numpy as np

from core.session.metrics import pearson
from core.session.taxonomy import AUTO, HUMAN, TAXONOMY, EpisodeCategory, categorise

TASK_CATEGORIES = ("navigation", "interaction", "mixed")
GRANULARITIES = ("visual_guided", "step_guided", "goal_only")
METRICS = ("avg_successful_steps", "im_rate", "max_consecutive_im", "recovery_rate", "action_entropy_bits")
REQUIRED_KEYS = ("granularity", "category")
RUN_HINT = "choose a folder written by `python main.py run --out FOLDER`"


class ReportError(Exception):
    """The folder cannot be reported on; the message says why and what to do."""


def agent_of(row: dict[str, Any]) -> str:
    return str(row["agent_spec"] if "agent_spec" in row else row["agent"])


def load_results(folder: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """The complete rows of results.jsonl, and a warning for each line skipped. Raises ReportError."""
    path = folder / "results.jsonl"
    if not folder.is_dir():
        raise ReportError(f"{folder} is not a folder; {RUN_HINT}")
    if not path.is_file():
        raise ReportError(f"{folder} has no results.jsonl; {RUN_HINT}, or run one: python main.py run --out {folder}")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportError(f"cannot read {path} ({exc}); check its permissions or restore it from a backup") from exc
    rows, warnings = [], []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            row = None
        if not isinstance(row, dict) or any(k not in row for k in REQUIRED_KEYS) or not (
                "agent_spec" in row or "agent" in row):
            warnings.append(f"{path}:{number} is not a complete result line (a crash mid-write?); skipped. Rerun the "
                            "same `python main.py run` command to redo that episode.")
            continue
        rows.append(row)
    return rows, warnings


def _rate(rows: Sequence[dict[str, Any]]) -> float | None:
    return sum(bool(r.get("success")) for r in rows) / len(rows) if rows else None


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


def build_report(folder: Path | str) -> dict[str, Any]:
    """Every number of the report, JSON-serialisable. Raises ReportError when there is nothing to read."""
    folder = Path(folder)
    rows, warnings = load_results(folder)
    main = [r for r in rows if not r.get("privileged")]
    privileged = [r for r in rows if r.get("privileged")]
    labelled, label_warnings = categorise(folder, main)
    agents = sorted({agent_of(r) for r in main})
    sr_rows, metric_rows, failure_rows, points = [], [], [], []
    failure_sources: dict[str, dict[str, dict[str, int]]] = {}
    for agent in agents:
        mine = [r for r in main if agent_of(r) == agent]
        for granularity in GRANULARITIES:
            subset = [r for r in mine if r["granularity"] == granularity]
            if not subset:
                continue
            settings = {c: [r for r in subset if r["category"] == c] for c in TASK_CATEGORIES}
            sr_rows.append({"agent": agent, "granularity": granularity,
                            **{c: _rate(settings[c]) for c in TASK_CATEGORIES}, "overall": _rate(subset),
                            "episodes": len(subset), **{f"n_{c}": len(settings[c]) for c in TASK_CATEGORIES}})
            steps = [r["success_step"] for r in subset if r.get("success") and r.get("success_step") is not None]
            metric_rows.append({"agent": agent, "granularity": granularity,
                                "avg_successful_steps": mean(steps) if steps else None,
                                **{name: _metric(subset, name) for name in METRICS[1:]}})
            for category, setting in settings.items():
                im = _metric(setting, "im_rate")
                if setting and im is not None:
                    points.append({"agent": agent, "granularity": granularity, "category": category, "im_rate": im,
                                   "success_rate": _rate(setting) or 0.0, "episodes": len(setting)})
        row, failure_sources[agent] = _failures(agent, [c for r, c in zip(main, labelled) if agent_of(r) == agent])
        failure_rows.append(row)
    by_agent = {a: pearson(*_xy([p for p in points if p["agent"] == a])) for a in agents}
    return {"folder": str(folder), "sr": sr_rows, "metrics": metric_rows, "failures": failure_rows,
            "failure_sources": failure_sources, "disputed": sum(c.disputed for c in labelled), "points": points,
            "pearson_im_sr": pearson(*_xy(points)), "pearson_by_agent": by_agent, "episodes": len(main),
            "privileged_episodes": len(privileged), "warnings": warnings + label_warnings}


def _xy(points: Sequence[dict[str, Any]]) -> tuple[list[float], list[float]]:
    return [p["im_rate"] for p in points], [p["success_rate"] for p in points]


def _markdown(headers: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def pearson_text(value: float | None) -> str:
    return format_value(value) if value is not None else "undefined (too few settings, or no variance)"


def write_report(folder: Path, report: dict[str, Any]) -> str:
    sr = _markdown(["agent", "granularity", *TASK_CATEGORIES, "overall", "episodes"],
                   [[r["agent"], r["granularity"], *(format_value(r[c], True) for c in TASK_CATEGORIES),
                     format_value(r["overall"], True), str(r["episodes"])] for r in report["sr"]])
    metrics = _markdown(["agent", "granularity", "avg successful steps", "IM rate", "max consecutive IMs",
                         "recovery rate", "action entropy (bits)"],
                        [[r["agent"], r["granularity"], format_value(r["avg_successful_steps"]),
                          format_value(r["im_rate"], True), format_value(r["max_consecutive_im"]),
                          format_value(r["recovery_rate"], True), format_value(r["action_entropy_bits"])]
                         for r in report["metrics"]])
    failures = _markdown(["agent", *TAXONOMY, "from human labels", "automatic"],
                         [[r["agent"], *(str(r[k]) for k in (*TAXONOMY, "from_human", "automatic"))]
                          for r in report["failures"]])
    per_agent = "; ".join(f"{agent}: {format_value(r) if r is not None else 'undefined'}"
                          for agent, r in report["pearson_by_agent"].items())
    text = "\n\n".join([
        "# PokeGym run report", f"{report['episodes']} episodes "
        f"({report['privileged_episodes']} privileged driver episodes are kept out of every table).",
        "## Success rate by granularity and category", sr,
        "## Movement metrics", metrics,
        "## Failure taxonomy (human labels where confirmed, automatic suggestions otherwise)", failures,
        f"Episodes whose annotators disagree: {report['disputed']} (the most common confirmed category is used).",
        "## Ineffective moves versus success",
        f"Pearson r between IM rate and success rate across {len(report['points'])} settings: "
        f"{pearson_text(report['pearson_im_sr'])}.",
        f"Per agent: {per_agent or 'no agents'}.",
        "![IM rate vs success rate](im_vs_sr.png)",
    ]) + "\n" + _warnings_section(report["warnings"])
    (folder / "report.md").write_text(text)
    for name, rows in (("success_rates", report["sr"]), ("metrics", report["metrics"]),
                       ("failures", report["failures"])):
        if rows:
            with (folder / f"{name}.csv").open("w", newline="") as handle:
                writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
                writer.writeheader()
                writer.writerows(rows)
    _scatter(folder / "im_vs_sr.png", report["points"], report["pearson_im_sr"])
    return text


def _warnings_section(warnings: Sequence[str]) -> str:
    """Damaged episode files and skipped lines, each with its reason, so report.md itself says what it left out."""
    if not warnings:
        return ""
    return "\n## Left out or read with warnings\n\n" + "\n".join(f"- {warning}" for warning in warnings) + "\n"


LONG_COLUMNS = ("table", "agent", "granularity", "category", "measure", "value")


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
    for r in report["metrics"]:
        for name in METRICS:
            add("metrics", r["agent"], r["granularity"], "all", name, r[name])
    for agent, sources in report["failure_sources"].items():
        for category, counts in sources.items():
            add("failure_taxonomy", agent, "all", category, "from_human", counts[HUMAN])
            add("failure_taxonomy", agent, "all", category, "automatic", counts[AUTO])
    for p in report["points"]:
        for name in ("im_rate", "success_rate", "episodes"):
            add("im_vs_sr", p["agent"], p["granularity"], p["category"], name, p[name])
    for agent, r_value in report["pearson_by_agent"].items():
        add("im_vs_sr", agent, "all", "all", "pearson_r", r_value)
    add("im_vs_sr", "all", "all", "all", "pearson_r", report["pearson_im_sr"])
    return out


def write_long_csv(path: Path, report: dict[str, Any]) -> None:
    with Path(path).open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(LONG_COLUMNS))
        writer.writeheader()
        writer.writerows({k: ("" if v is None else v) for k, v in row.items()} for row in long_rows(report))


def _scatter(path: Path, points: list[dict[str, Any]], r_value: float | None) -> None:
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
    title = f"Pearson r = {r_value:.2f}" if r_value is not None else "Pearson r undefined"
    cv2.putText(image, title, (size // 2 - 60, 25), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (0, 0, 0), 1, cv2.LINE_AA)
    for point in points:
        x = int(margin + plot * min(max(point["im_rate"], 0.0), 1.0))
        y = int(size - margin - plot * min(max(point["success_rate"], 0.0), 1.0))
        cv2.circle(image, (x, y), 5, (200, 90, 30), -1, cv2.LINE_AA)
    cv2.imwrite(str(path), image)
