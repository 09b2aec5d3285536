"""TaxonomyChart: failure categories per agent as grouped bars, each bar split into the episodes whose
category a human confirmed (solid) and those that keep the automatic suggestion (pale). Hovering a bar
shows its counts; the number above a bar is its total."""

from __future__ import annotations

from collections.abc import Mapping

import pyqtgraph as pg
from PySide6.QtCore import QPointF

from core.analysis.taxonomy import AUTO, HUMAN, TAXONOMY
from widgets.plot_parts import plot_layout, plot_scene, view_box

AGENT_COLOURS = ((31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189), (140, 86, 75),
                 (227, 119, 194), (127, 127, 127), (188, 189, 34), (23, 190, 207))
HUMAN_TEXT, AUTO_TEXT = "solid: human label", "pale: automatic suggestion"
Sources = Mapping[str, Mapping[str, Mapping[str, int]]]  # agent -> category -> {"human": n, "auto": n}


def agent_colour(index: int, alpha: int = 255) -> tuple[int, int, int, int]:
    return (*AGENT_COLOURS[index % len(AGENT_COLOURS)], alpha)


class TaxonomyChart(pg.PlotWidget):
    def __init__(self) -> None:
        super().__init__()
        self.setBackground("w")
        self.setMinimumSize(440, 260)  # below this the title, legend and tick labels are cut off
        plot_layout(self).setContentsMargins(4, 4, 16, 4)  # room for the last tick label
        self.setTitle("Failure taxonomy", color="k", size="10pt")
        self.showGrid(y=True, alpha=0.2)
        self.setLabel("left", "episodes", color="#333")
        for side in ("left", "bottom"):
            self.getAxis(side).setTextPen("#333")
        self.setMouseEnabled(x=False, y=False)
        self.hideButtons()
        bottom = self.getAxis("bottom")
        bottom.setTicks([[(i, name.replace(" ", "\n")) for i, name in enumerate(TAXONOMY)]])
        bottom.setHeight(36)
        self._legend = self.addLegend(offset=(-5, 5), labelTextSize="8pt", labelTextColor="k")
        self._legend.setBrush(pg.mkBrush(255, 255, 255, 220))
        self._items: list[pg.GraphicsObject] = []
        self._bars: list[tuple[float, float, float, str]] = []  # x0, x1, top, tooltip
        self._counts: dict[tuple[str, str], tuple[int, int]] = {}
        self._labels: list[pg.TextItem] = []
        self._top = 1
        plot_scene(self).sigMouseMoved.connect(self._hover)
        view_box(self).sigResized.connect(self._fit_headroom)
        self.set_sources({})

    def set_sources(self, sources: Sources) -> None:
        """Draw the counts of each agent (in the mapping's order) and source."""
        for item in self._items:
            self.removeItem(item)
        self._legend.clear()
        self._items, self._bars, self._counts, self._labels = [], [], {}, []
        width = 0.8 / max(1, len(sources))
        top = 1
        for index, (agent, categories) in enumerate(sources.items()):
            xs = [i - 0.4 + width * (index + 0.5) for i in range(len(TAXONOMY))]
            human = [int(categories.get(c, {}).get(HUMAN, 0)) for c in TAXONOMY]
            auto = [int(categories.get(c, {}).get(AUTO, 0)) for c in TAXONOMY]
            pen = pg.mkPen(agent_colour(index), width=1)
            self._add(pg.BarGraphItem(x=xs, height=human, width=0.9 * width, brush=agent_colour(index), pen=pen))
            self._add(pg.BarGraphItem(x=xs, y0=human, height=auto, width=0.9 * width, brush=agent_colour(index, 70),
                                      pen=pen))
            self._legend.addItem(pg.BarGraphItem(x=[0], height=[1], width=1, brush=agent_colour(index)), agent)
            for x, category, h, a in zip(xs, TAXONOMY, human, auto):
                self._counts[(agent, category)] = (h, a)
                self._bars.append((x - width / 2, x + width / 2, h + a, self._tip(agent, category, h, a)))
                top = max(top, h + a)
                if h + a:
                    label = pg.TextItem(str(h + a), color="k", anchor=(0.5, 1.0))
                    label.setPos(x, h + a)
                    self._add(label)
                    self._labels.append(label)
        for brush, text in (((80, 80, 80), HUMAN_TEXT), ((80, 80, 80, 70), AUTO_TEXT)):
            self._legend.addItem(pg.BarGraphItem(x=[0], height=[1], width=1, brush=brush), text)
        view_box(self).setXRange(-0.5, len(TAXONOMY) - 0.5, padding=0)
        self._top = top
        self._fit_headroom()

    def _fit_headroom(self, *_: object) -> None:
        """Leave the legend's height (in pixels, however tall the chart is) free above the tallest bar and its
        count, so the legend never covers a count: a fixed share of the range covered one (also in the PNG).
        A short chart lays the legend out in more columns first."""
        view_h = view_box(self).height()
        if view_h <= 0:
            return
        for columns in (1, 2):  # three would be wider than a small chart
            if self._legend.columnCount != columns:
                self._legend.setColumnCount(columns)
                self._legend.layout.activate()  # its new size now, not at the next paint
                self._legend.updateSize()
            needed_px = self._legend.boundingRect().height() + 5 + 28  # the legend, its offset, a count's text
            if needed_px < 0.5 * view_h:
                break
        free = 1.0 - needed_px / view_h
        view_box(self).setYRange(0, self._top / max(free, 0.15), padding=0)

    def _add(self, item: pg.GraphicsObject) -> None:
        self.addItem(item)
        self._items.append(item)

    @staticmethod
    def _tip(agent: str, category: str, human: int, auto: int) -> str:
        return (f"{agent} — {category}: {human + auto} episode(s)\n{human} from human labels, "
                f"{auto} automatic suggestion(s)")

    # -- what the chart shows (for tests and exports) ----------------------------------------
    def counts(self) -> dict[tuple[str, str], tuple[int, int]]:
        """(agent, category) -> (episodes from human labels, episodes from automatic suggestions)."""
        return dict(self._counts)

    def legend_covers_a_count(self) -> bool:
        legend = self._legend.sceneBoundingRect()
        return any(legend.intersects(label.sceneBoundingRect()) for label in self._labels)

    def legend_texts(self) -> list[str]:
        return [label.text for _, label in self._legend.items]

    def tooltip_at(self, x: float, y: float) -> str:
        """The tooltip for a point in data coordinates: the bar under it, or '' if none."""
        for x0, x1, top, tip in self._bars:
            if x0 <= x <= x1 and 0 <= y <= max(top, 0.3):
                return tip
        return ""

    def _hover(self, scene_pos: QPointF) -> None:
        point = view_box(self).mapSceneToView(scene_pos)
        self.setToolTip(self.tooltip_at(point.x(), point.y()))
