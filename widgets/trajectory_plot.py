"""TrajectoryPlot: the character's path seen from above, from evaluator samples."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg

_TAIL = 600  # samples drawn bright; older ones fade into the full path


class TrajectoryPlot(pg.PlotWidget):
    def __init__(self) -> None:
        super().__init__()
        self.setBackground("w")
        self.setAspectLocked(True)
        self.showGrid(x=True, y=True, alpha=0.2)
        self.setLabel("bottom", "x (m, east)")
        self.setLabel("left", "y (m, north)")
        self._path = self.plot([], [], pen=pg.mkPen((150, 170, 200), width=1))
        self._tail = self.plot([], [], pen=pg.mkPen((30, 90, 200), width=2))
        self._position = pg.ScatterPlotItem(size=12, brush=pg.mkBrush(220, 40, 40))
        self._heading = self.plot([], [], pen=pg.mkPen((220, 40, 40), width=2))
        self._start = pg.ScatterPlotItem(size=10, symbol="s", brush=pg.mkBrush(40, 160, 60))
        self._goal = self.plot([], [], pen=pg.mkPen((230, 150, 0), width=2))
        self._marks = pg.ScatterPlotItem(size=9, symbol="x", pen=pg.mkPen((200, 0, 150), width=2))
        for item in (self._position, self._start, self._marks):
            self.addItem(item)
        self._path.setDownsampling(auto=True, method="peak")
        self._path.setClipToView(True)
        self.points = 0

    def set_path(self, xs: np.ndarray, ys: np.ndarray) -> None:
        """Replace the path data in place (cheap for tens of thousands of samples)."""
        self.points = len(xs)
        self._path.setData(xs, ys)
        self._tail.setData(xs[-_TAIL:], ys[-_TAIL:])

    def set_position(self, x: float, y: float, heading_deg: float) -> None:
        self._position.setData([x], [y])
        dx, dy = -math.sin(math.radians(heading_deg)) * 3, math.cos(math.radians(heading_deg)) * 3
        self._heading.setData([x, x + dx], [y, y + dy])

    def set_start(self, x: float, y: float) -> None:
        self._start.setData([x], [y])

    def set_goal(self, x: float, y: float, radius: float) -> None:
        angles = np.linspace(0, 2 * np.pi, 48)
        self._goal.setData(x + radius * np.cos(angles), y + radius * np.sin(angles))

    def set_marks(self, xs: list[float], ys: list[float]) -> None:
        """Interventions and deadlock spans."""
        self._marks.setData(xs, ys)

    def clear_episode(self) -> None:
        self.set_path(np.zeros(0), np.zeros(0))
        self._marks.setData([], [])
