"""A value read from memory over time, above the pad input held at the same moments.

Two plots share the time axis: the value (one line), and the sticks (left x and y, right x and y).
The owner appends readings; the widget keeps the last `keep` of them and knows nothing of where
they come from.
"""

from __future__ import annotations

from collections import deque

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QVBoxLayout, QWidget

STICKS = (("left x", (230, 120, 20)), ("left y", (30, 130, 220)), ("right x", (150, 60, 200)),
          ("right y", (40, 160, 90)))


class ValuePlot(QWidget):
    def __init__(self, keep: int = 600) -> None:
        super().__init__()
        self._times: deque[float] = deque(maxlen=keep)
        self._values: deque[float] = deque(maxlen=keep)
        self._sticks: deque[tuple[float, float, float, float]] = deque(maxlen=keep)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.value_plot = pg.PlotWidget(background="w")
        self.value_plot.setLabel("left", "value")
        self.value_plot.showGrid(x=True, y=True, alpha=0.2)
        self.value_curve = self.value_plot.plot(pen=pg.mkPen((20, 20, 20), width=2))
        self.pad_plot = pg.PlotWidget(background="w")
        self.pad_plot.setLabel("left", "pad")
        self.pad_plot.setLabel("bottom", "seconds")
        self.pad_plot.setYRange(-1.1, 1.1)
        self.pad_plot.setXLink(self.value_plot)
        self.pad_plot.addLegend(offset=(6, 4), labelTextColor=(40, 40, 40), colCount=4)
        self.stick_curves = [self.pad_plot.plot(pen=pg.mkPen(color, width=2), name=name) for name, color in STICKS]
        layout.addWidget(self.value_plot, 3)
        layout.addWidget(self.pad_plot, 2)

    def set_title(self, text: str) -> None:
        self.value_plot.setTitle(text, color=(40, 40, 40), size="10pt")

    def clear(self) -> None:
        self._times.clear()
        self._values.clear()
        self._sticks.clear()
        self._redraw()

    def add(self, seconds: float, value: float | None, sticks: tuple[float, float, float, float]) -> None:
        """One reading: the value (None: unreadable, drawn as a gap) and the sticks held then."""
        self._times.append(seconds)
        self._values.append(np.nan if value is None else float(value))
        self._sticks.append(sticks)
        self._redraw()

    def _redraw(self) -> None:
        times = np.fromiter(self._times, float, len(self._times))
        values = np.fromiter(self._values, float, len(self._values))
        self.value_curve.setData(times, values, connect="finite")
        sticks = np.array(self._sticks, dtype=float).reshape(-1, len(STICKS))
        for index, curve in enumerate(self.stick_curves):
            curve.setData(times, sticks[:, index])

    def count(self) -> int:
        return len(self._times)
