"""ImScatter: ineffective-move rate (x) against success rate (y), one point per unit of the report's
correlation (by default an agent on one task at one granularity, trials pooled), coloured by agent.
The title gives r overall with n, p and the bootstrap 95% interval; the legend gives r per agent, and
the caption under the plot r per instruction granularity. Hovering a point names it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyqtgraph as pg

from core.analysis.report import UNIT_WORDS, correlation_text, format_value
from widgets.plot_parts import plot_item, plot_layout, view_box
from widgets.taxonomy_chart import agent_colour


def r_text(value: float | None) -> str:
    return f"r = {format_value(value)}" if value is not None else "r undefined"


def _tip(x: float, y: float, data: Any) -> str:
    return f"{data}\nIM rate {x:.1f}%, success rate {y:.1f}%"


class ImScatter(pg.PlotWidget):
    def __init__(self) -> None:
        super().__init__()
        self.setBackground("w")
        self.setMinimumSize(440, 260)  # below this the title, legend and tick labels are cut off
        plot_layout(self).setContentsMargins(4, 4, 16, 4)  # room for the last tick label
        self.showGrid(x=True, y=True, alpha=0.2)
        self.setLabel("bottom", "ineffective-move rate (%)", color="#333")
        self.setLabel("left", "success rate (%)", color="#333")
        for side in ("left", "bottom"):
            self.getAxis(side).setTextPen("#333")
        view_box(self).setXRange(-3, 103, padding=0)
        view_box(self).setYRange(-3, 103, padding=0)
        self.setMouseEnabled(x=False, y=False)
        self.hideButtons()
        self._legend = self.addLegend(offset=(-10, 10), labelTextSize="8pt", labelTextColor="k")
        self._legend.setBrush(pg.mkBrush(255, 255, 255, 220))
        self._items: list[pg.ScatterPlotItem] = []
        self._points: list[tuple[str, float, float]] = []
        self.caption = ""
        self.set_points([], None)

    def set_points(self, points: Sequence[Mapping[str, Any]], found: Mapping[str, Any] | None) -> None:
        """`points` and `found` (the report's "correlation") as build_report gives them."""
        for item in self._items:
            self.removeItem(item)
        self._legend.clear()
        self._items, self._points = [], []
        found = found or {}
        by_agent: Mapping[str, Any] = found.get("by_agent", {})
        for index, agent in enumerate(by_agent):
            mine = [p for p in points if p["agent"] == agent]
            item = pg.ScatterPlotItem(size=11, pen=pg.mkPen("w", width=1), brush=pg.mkBrush(agent_colour(index)),
                                      hoverable=True, tip=_tip, hoverSize=14)
            item.setData(x=[100 * p["im_rate"] for p in mine], y=[100 * p["success_rate"] for p in mine],
                         data=[f"{agent} / {p['granularity']} / {p.get('unit', p['category'])} "
                               f"(n={p['episodes']})" for p in mine])
            self.addItem(item)
            self._items.append(item)
            self._legend.addItem(item, f"{agent} ({r_text(by_agent[agent].get('r'))})")
            self._points += [(agent, p["im_rate"], p["success_rate"]) for p in mine]
        unit: str = found.get("unit", "task")
        overall = found.get("overall", {})
        per = UNIT_WORDS.get(unit, unit).split(" (")[0]  # "agent, task and granularity": a task alone it is not
        self.setTitle(f"IM rate vs success rate: {r_text(overall.get('r'))} ({len(points)} points, one per {per})",
                      color="k", size="10pt")
        lines = [f"<b>all</b>: {correlation_text(overall)}"] if overall else []
        lines += [f"<b>{g}</b>: {correlation_text(v)}" for g, v in found.get("by_granularity", {}).items()]
        self.caption = "<br>".join(lines)

    # -- what the plot shows (for tests) -------------------------------------------------------
    def title_text(self) -> str:
        return plot_item(self).titleLabel.text

    def legend_texts(self) -> list[str]:
        return [label.text for _, label in self._legend.items]

    def plotted(self) -> list[tuple[str, float, float]]:
        """(agent, IM rate, success rate) per point, as fractions."""
        return list(self._points)
