"""Small HTML pieces of the report: the style sheet, an escaped table, the taxonomy bars."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from core.analysis.taxonomy import TAXONOMY

CATEGORY_COLOURS = {"Success": "#2e8b47", "Human-assisted success": "#9ccfa8", "Unaware Deadlock": "#c62828",
                    "Aware Deadlock": "#e08a00", "Unclassified Deadlock": "#6a6ac8", "Lost": "#7a7a7a",
                    "Execution Failure": "#8e44ad"}

STYLE = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: #1d1d1f;
       max-width: 1200px; margin: 24px auto; padding: 0 20px; background: #fafafa; }
h1 { font-size: 26px; margin-bottom: 4px; } h2 { margin-top: 34px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 0 0 4px; word-break: break-all; }
.meta { color: #555; } .warning { color: #8a4b00; background: #fff4e0; padding: 8px 8px 8px 28px; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; font-size: 13px; margin: 8px 0 4px; background: #fff;
        font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #d8d8d8; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f0f0f3; font-weight: 600; } tr:nth-child(even) td { background: #fbfbfd; }
img.figure { display: block; max-width: 480px; border: 1px solid #ddd; background: #fff; }
.bars { margin: 10px 0; } .bar { display: flex; height: 22px; margin: 3px 0; border-radius: 3px; overflow: hidden; }
.bar span { color: #fff; font-size: 12px; line-height: 22px; padding-left: 4px; white-space: nowrap; overflow: hidden; }
.barlabel { font-size: 13px; margin-top: 8px; } .legend span { display: inline-block; margin-right: 12px; }
.legend i { display: inline-block; width: 12px; height: 12px; margin-right: 4px; vertical-align: -1px; }
.episode { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: 10px 12px; margin: 12px 0; }
.tag { color: #fff; border-radius: 3px; padding: 1px 6px; font-size: 12px; }
.strip { display: flex; flex-wrap: wrap; gap: 6px; } figure { margin: 0; }
figure img { display: block; width: 160px; border-bottom: 4px solid #999; }
figcaption { font-size: 12px; color: #555; } .span { color: #444; margin: 4px 0; } .said { font-style: italic; }
code { font-size: 12px; color: #555; word-break: break-all; }
nav { margin: 10px 0; } nav a { color: #1a5fb4; text-decoration: none; }
"""


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Every cell is escaped: cells may hold text from files."""
    head = "".join(f"<th>{escape(str(h))}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{escape(str(cell))}</td>" for cell in row) + "</tr>" for row in rows)
    return (f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
            f"<tbody>{body or '<tr><td>none</td></tr>'}</tbody></table></div>")


def taxonomy_bars(failures: Sequence[dict[str, Any]]) -> str:
    """One bar per agent, split by failure category in proportion to its episodes."""
    bars: list[str] = []
    for row in failures:
        total = sum(int(row.get(c, 0)) for c in TAXONOMY)
        if not total:
            continue
        pieces = "".join(
            f'<span style="width:{100 * int(row[c]) / total:.2f}%;background:{CATEGORY_COLOURS[c]}" '
            f'title="{escape(c)}: {int(row[c])}">{int(row[c])}</span>' for c in TAXONOMY if int(row.get(c, 0)))
        bars.append(f'<div class="barlabel">{escape(str(row["agent"]))} ({total} episodes)</div>'
                    f'<div class="bar">{pieces}</div>')
    legend = "".join(f'<span><i style="background:{CATEGORY_COLOURS[c]}"></i>{escape(c)}</span>' for c in TAXONOMY)
    return f'<div class="bars">{"".join(bars)}<div class="legend">{legend}</div></div>'
