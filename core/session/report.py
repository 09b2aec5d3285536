"""The paper's tables from a run folder's results.jsonl: success rates, IM metrics, failures, correlation."""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from statistics import mean
from typing import Any

import cv2
import numpy as np

from core.session.metrics import CATEGORIES, pearson

TASK_CATEGORIES = ("navigation", "interaction", "mixed")
GRANULARITIES = ("visual_guided", "step_guided", "goal_only")


def load_results(folder: Path) -> list[dict[str, Any]]:
    path = folder / "results.jsonl"
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist; run `python main.py run --out {folder}` first")
    rows = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            print(f"warning: {path}:{number} is not a complete JSON line (a crash mid-write?); skipped")
    return rows


def _rate(rows: Sequence[dict[str, Any]]) -> float | None:
    return sum(bool(r.get("success")) for r in rows) / len(rows) if rows else None


def _fmt(value: float | None, percent: bool = False) -> str:
    if value is None:
        return "-"
    return f"{100 * value:.1f}%" if percent else f"{value:.2f}"


def _metric(rows: Sequence[dict[str, Any]], name: str) -> float | None:
    values = [r["metrics"][name] for r in rows if r.get("metrics") and r["metrics"].get(name) is not None]
    return mean(values) if values else None


def build_report(folder: Path) -> dict[str, Any]:
    rows = load_results(folder)
    main = [r for r in rows if not r.get("privileged")]
    privileged = [r for r in rows if r.get("privileged")]
    agents = sorted({r["agent_spec"] if "agent_spec" in r else r["agent"] for r in main})
    sr_rows, metric_rows, failure_rows, points = [], [], [], []
    for agent in agents:
        mine = [r for r in main if r.get("agent_spec", r["agent"]) == agent]
        for granularity in GRANULARITIES:
            cells = {c: _rate([r for r in mine if r["granularity"] == granularity and r["category"] == c])
                     for c in TASK_CATEGORIES}
            subset = [r for r in mine if r["granularity"] == granularity]
            if not subset:
                continue
            sr_rows.append({"agent": agent, "granularity": granularity, **cells, "overall": _rate(subset),
                            "episodes": len(subset)})
            successes = [r for r in subset if r.get("success")]
            metric_rows.append({
                "agent": agent, "granularity": granularity,
                "avg_successful_steps": mean(r["success_step"] for r in successes) if successes else None,
                "im_rate": _metric(subset, "im_rate"), "max_consecutive_im": _metric(subset, "max_consecutive_im"),
                "recovery_rate": _metric(subset, "recovery_rate"),
                "action_entropy_bits": _metric(subset, "action_entropy_bits"),
            })
            for category in TASK_CATEGORIES:
                setting = [r for r in subset if r["category"] == category]
                im = _metric(setting, "im_rate")
                if setting and im is not None:
                    points.append((im, _rate(setting) or 0.0, f"{agent}/{granularity}/{category}"))
        counts = defaultdict(int)
        for r in mine:
            counts[r.get("failure_category_suggestion", "Lost") if r.get("end_reason") != "error" else "Error"] += 1
        failure_rows.append({"agent": agent, **{c: counts.get(c, 0) for c in (*CATEGORIES, "Error")}})
    r_value = pearson([p[0] for p in points], [p[1] for p in points])
    return {"sr": sr_rows, "metrics": metric_rows, "failures": failure_rows, "points": points,
            "pearson_im_sr": r_value, "episodes": len(main), "privileged_episodes": len(privileged)}


def _markdown(headers: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def write_report(folder: Path, report: dict[str, Any]) -> str:
    sr = _markdown(["agent", "granularity", *TASK_CATEGORIES, "overall", "episodes"],
                   [[r["agent"], r["granularity"], *(_fmt(r[c], True) for c in TASK_CATEGORIES),
                     _fmt(r["overall"], True), str(r["episodes"])] for r in report["sr"]])
    metrics = _markdown(["agent", "granularity", "avg successful steps", "IM rate", "max consecutive IMs",
                         "recovery rate", "action entropy (bits)"],
                        [[r["agent"], r["granularity"], _fmt(r["avg_successful_steps"]), _fmt(r["im_rate"], True),
                          _fmt(r["max_consecutive_im"]), _fmt(r["recovery_rate"], True),
                          _fmt(r["action_entropy_bits"])] for r in report["metrics"]])
    failure_keys = [*CATEGORIES, "Error"]
    failures = _markdown(["agent", *failure_keys],
                         [[r["agent"], *(str(r[k]) for k in failure_keys)] for r in report["failures"]])
    r_value = report["pearson_im_sr"]
    text = "\n\n".join([
        "# PokeGym run report", f"{report['episodes']} episodes "
        f"({report['privileged_episodes']} privileged driver episodes are kept out of every table).",
        "## Success rate by granularity and category", sr,
        "## Movement metrics", metrics, "## Failure taxonomy (automatic suggestions)", failures,
        "## Ineffective moves versus success",
        f"Pearson r between IM rate and success rate across {len(report['points'])} settings: "
        f"{_fmt(r_value) if r_value is not None else 'undefined (too few settings, or no variance)'}.",
        "![IM rate vs success rate](im_vs_sr.png)",
    ]) + "\n"
    (folder / "report.md").write_text(text)
    for name, rows in (("success_rates", report["sr"]), ("metrics", report["metrics"]),
                       ("failures", report["failures"])):
        if rows:
            with (folder / f"{name}.csv").open("w", newline="") as handle:
                writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
                writer.writeheader()
                writer.writerows(rows)
    _scatter(folder / "im_vs_sr.png", report["points"], r_value)
    return text


def _scatter(path: Path, points: list[tuple[float, float, str]], r_value: float | None) -> None:
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
    for im_rate, success_rate, _ in points:
        x = int(margin + plot * min(max(im_rate, 0.0), 1.0))
        y = int(size - margin - plot * min(max(success_rate, 0.0), 1.0))
        cv2.circle(image, (x, y), 5, (200, 90, 30), -1, cv2.LINE_AA)
    cv2.imwrite(str(path), image)
