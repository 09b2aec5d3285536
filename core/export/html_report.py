"""`python main.py report RUN --html report.html`: the run report as one self-contained HTML file.

Everything is inside the file (styles inline, images as data: URIs, no script, nothing fetched), so it
can be mailed or attached and opens in any browser. It holds the success-rate tables, the movement
metrics, the IM-SR scatter with the correlation, the failure taxonomy, per-task results, and for every
failed episode a thumbnail strip of its deadlock span. Every text that comes from a file (task ids,
agent names, a model's thoughts, paths) is escaped: a thought may contain HTML.
"""

from __future__ import annotations

import base64
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from html import escape
from pathlib import Path
from statistics import mean
from typing import Any

import cv2

from core.analysis.outcome import earned
from core.analysis.report import (
    CATEGORY_SHORT,
    GRANULARITIES,
    GRANULARITY_SHORT,
    HUMAN_ASSISTED_NOTE,
    MOVEMENT_NOTE,
    TASK_CATEGORIES,
    UNIT_WORDS,
    agent_of,
    correlation_text,
    format_value,
    load_results,
    movement_table,
    paper_rows,
    scatter_image,
)
from core.analysis.rescore import rescore_rows
from core.analysis.taxonomy import SUCCESS, TAXONOMY, EpisodeCategory, categorise
from core.export.html_parts import CATEGORY_COLOURS, STYLE, table, taxonomy_bars
from core.export.strips import Strip, deadlock_strip
from core.session.run_folder import is_error

NAV = ('<nav><a href="#success">Success rates</a> · <a href="#metrics">Movement metrics</a> · '
       '<a href="#correlation">IM vs SR</a> · <a href="#taxonomy">Failure taxonomy</a> · '
       '<a href="#tasks">Per-task results</a> · <a href="#failed">Failed episodes</a></nav>')


def data_uri(mime: str, payload: bytes) -> str:
    return f"data:{mime};base64,{base64.b64encode(payload).decode('ascii')}"


def _success_tables(report: dict[str, Any]) -> str:
    paper_headers = ["agent"] + [f"{GRANULARITY_SHORT[g]} {label}" for g in GRANULARITIES
                                 for label in (*CATEGORY_SHORT.values(), "Avg")]
    detail = [[r["agent"], r["granularity"],
               *(f"{format_value(r[c], True)} (n={r[f'n_{c}']})" for c in TASK_CATEGORIES),
               format_value(r["overall"], True), str(r["episodes"]), str(r.get("human_assisted", 0))]
              for r in report["sr"]]
    return ('<h2 id="success">Success rate (the paper\'s layout)</h2>' + table(paper_headers, paper_rows(report))
            + '<h2 id="by-category">Success rate by granularity and category</h2>'
            + f"<p>{escape(HUMAN_ASSISTED_NOTE)}</p>"
            + table(["agent", "granularity", *TASK_CATEGORIES, "overall", "episodes", "human-assisted"], detail))


def _metrics_table(report: dict[str, Any]) -> str:
    headers, rows = movement_table(report)
    return f'<h2 id="metrics">Movement metrics</h2><p>{escape(MOVEMENT_NOTE)}</p>' + table(headers, rows)


def _correlation(report: dict[str, Any]) -> str:
    found = report["correlation"]
    unit: str = found["unit"]
    ok, png = cv2.imencode(".png", scatter_image(report["points"], found["overall"]))
    image = f'<img class="figure" alt="IM rate versus success rate" src="{data_uri("image/png", png.tobytes())}">' \
        if ok else "<p>(the scatter could not be drawn)</p>"
    items = [f"<li>{escape(g)}: {escape(correlation_text(v))}</li>" for g, v in found["by_granularity"].items()]
    agents = [f"<li>{escape(a)}: {escape(correlation_text(v))}</li>" for a, v in found["by_agent"].items()]
    return (f'<h2 id="correlation">Ineffective moves versus success</h2>{image}'
            f"<p>Pearson r between IM rate and success rate, one point per "
            f"{escape(UNIT_WORDS.get(unit, unit))} "
            f"({len(report['points'])} points): {escape(correlation_text(found['overall']))}.</p>"
            f"<p>Per granularity:</p><ul>{''.join(items) or '<li>none</li>'}</ul>"
            f"<p>Per agent:</p><ul>{''.join(agents) or '<li>none</li>'}</ul>")


def _taxonomy(report: dict[str, Any]) -> str:
    rows = [[r["agent"], *(str(r[k]) for k in (*TAXONOMY, "from_human", "automatic"))] for r in report["failures"]]
    return ('<h2 id="taxonomy">Failure taxonomy</h2>'
            "<p>Human labels where an annotator confirmed one, automatic suggestions "
            f"otherwise. Episodes whose annotators disagree: {int(report['disputed'])}.</p>"
            + taxonomy_bars(report["failures"]) + table(["agent", *TAXONOMY, "from human labels", "automatic"], rows))


def _per_task(rows: Sequence[dict[str, Any]], categories: Sequence[EpisodeCategory]) -> str:
    groups: dict[tuple[str, str, str], list[tuple[dict[str, Any], EpisodeCategory]]] = {}
    for row, category in zip(rows, categories):
        key = (str(row.get("task_id", "?")), str(row["granularity"]), agent_of(row))
        groups.setdefault(key, []).append((row, category))
    table_rows: list[list[str]] = []
    for (task, granularity, agent), members in sorted(groups.items()):
        results = [r for r, _ in members]
        wins = [r for r in results if earned(r)]
        steps = [r["success_step"] for r in wins if r.get("success_step") is not None]
        ims = [r["metrics"]["im_rate"] for r in results if r.get("metrics") and r["metrics"].get("im_rate") is not None]
        counted = Counter(c.category for _, c in members)
        outcome = ", ".join(f"{name} ×{counted[name]}" for name in TAXONOMY if counted[name])
        table_rows.append([task, str(members[0][0].get("category", "?")), granularity, agent, str(len(results)),
                           str(len(wins)), format_value(len(wins) / len(results), True) if results else "-",
                           format_value(mean(steps)) if steps else "-", format_value(mean(ims), True) if ims else "-",
                           outcome])
    return '<h2 id="tasks">Per-task results</h2>' + table(
        ["task", "category", "granularity", "agent", "episodes", "successes", "success rate", "avg successful steps",
         "IM rate", "outcomes"], table_rows)


def _strip_html(strip: Strip) -> str:
    if strip.error:
        return f'<p class="warning">{escape(strip.error)}</p>'
    cells: list[str] = []
    for thumb in strip.thumbnails:
        colour = {"progressing": "#287a3c", "stuck": "#c62828", "unsure": "#c88c00"}.get(thumb.self_assessment, "#999")
        cells.append(f'<figure><img alt="step {thumb.step}" src="{data_uri("image/jpeg", thumb.jpeg)}" '
                     f'style="border-bottom-color:{colour}"><figcaption>step {thumb.step} · '
                     f'{escape(thumb.self_assessment or "-")}</figcaption></figure>')
    said = ""
    if strip.said is not None:
        step, assessment, thought = strip.said
        excerpt = thought if len(thought) <= 400 else thought[:400].rstrip() + "…"
        said = (f'<p class="said">At step {step} the agent said ({escape(assessment or "no self-assessment")}): '
                f"“{escape(excerpt) or '(no thought)'}”</p>")
    return (f'<p class="span">Steps {strip.start}–{strip.end}, {escape(strip.origin)}</p>'
            f'<div class="strip">{"".join(cells)}</div>{said}')


def _failed(folder: Path, rows: Sequence[dict[str, Any]], categories: Sequence[EpisodeCategory],
            errors: Sequence[dict[str, Any]]) -> str:
    cards: list[str] = []
    for row, category in zip(rows, categories):
        if row.get("success") or category.category == SUCCESS:
            continue
        strip = deadlock_strip(folder / row["episode"], row) if row.get("episode") else \
            Strip(0, 0, "", error="no episode file is recorded for this result")
        colour = CATEGORY_COLOURS.get(category.category, "#777")
        cards.append(
            f'<section class="episode"><h3>{escape(str(row.get("key", "?")))}</h3>'
            f'<p><span class="tag" style="background:{colour}">{escape(category.category)}</span> '
            f'({escape(category.source)}) · task {escape(str(row.get("task_id", "?")))} · '
            f'{escape(str(row["granularity"]))} · {escape(agent_of(row))} · ended by '
            f'{escape(str(row.get("end_reason", "?")))} after {escape(str(row.get("steps_used", "?")))} steps · '
            f'<code>{escape(str(row.get("episode", "")))}</code></p>{_strip_html(strip)}</section>')
    text = f'<h2 id="failed">Failed episodes ({len(cards)})</h2>'
    text += "".join(cards) or "<p>None: every episode succeeded.</p>"
    if errors:
        text += ('<h2 id="errors">Infrastructure errors (not results)</h2><p>These episodes ended because the game '
                 "or the evaluator died, or the model API failed for good. They are left out of every table and "
                 "rate; running the same command again retries them.</p>"
                 + table(["episode", "agent", "task", "granularity", "error"],
                         [[e.get("key"), e.get("agent"), e.get("task_id"), e.get("granularity"), e.get("error")]
                          for e in errors]))
    return text


def _header(folder: Path, report: dict[str, Any]) -> str:
    warnings: Iterable[str] = report.get("warnings") or []
    notes = "".join(f"<li>{escape(w)}</li>" for w in warnings)
    rescored = " Metrics were rescored from the episode files." if report.get("rescored") else ""
    count = len(report.get("infrastructure_errors") or [])
    errors = (f' <a href="#errors">{count} episode(s) ended in an infrastructure error</a> and are not results.'
              if count else "")
    return (f"<h1>PokeGym run report</h1><p class=\"meta\">{escape(str(folder))} · generated "
            f"{escape(time.strftime('%Y-%m-%d %H:%M'))} · {int(report['episodes'])} episodes "
            f"({int(report['privileged_episodes'])} privileged driver episodes are kept out of every table).{rescored}"
            f"{errors}"
            "</p>" + (f'<ul class="warning">{notes}</ul>' if notes else "") + NAV)


def build_html(folder: Path, report: dict[str, Any]) -> str:
    """The page for a report made by core.analysis.report.build_report(folder, ...)."""
    folder = Path(folder)
    rows, _ = load_results(folder)
    rows = [r for r in rows if not is_error(r)]  # not results: listed apart, from the report
    if report.get("rescored"):
        rows, _ = rescore_rows(folder, rows)
    main = [r for r in rows if not r.get("privileged")]
    categories, _ = categorise(folder, main)
    body = "".join([_header(folder, report), _success_tables(report), _metrics_table(report), _correlation(report),
                    _taxonomy(report), _per_task(main, categories),
                    _failed(folder, main, categories, report.get("infrastructure_errors") or [])])
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>PokeGym run report · '
            f'{escape(folder.name)}</title><meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<style>{STYLE}</style></head><body>{body}</body></html>\n")


def write_html(path: Path, folder: Path, report: dict[str, Any]) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(build_html(folder, report), encoding="utf-8")
    return path
