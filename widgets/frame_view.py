"""FrameView: shows RGB frames with pyqtgraph's fast path (uint8, row-major, no levels, no LUT)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg


class FrameView(pg.GraphicsLayoutWidget):
    def __init__(self) -> None:
        super().__init__()
        self.setBackground("k")
        self._view = self.addViewBox(lockAspect=True, enableMouse=False)
        self._view.invertY(True)
        self._image = pg.ImageItem(axisOrder="row-major")
        self._view.addItem(self._image)
        self.frames_shown = 0
        self._current: np.ndarray | None = None  # kept alive: the ImageItem may point into it

    def show_frame(self, pixels: np.ndarray) -> None:
        """Display a frame. The caller hands over `pixels` and must not modify it afterwards."""
        first = self._current is None
        self._current = pixels
        self._image.setImage(pixels, autoLevels=False, levels=None)
        if first:
            self._view.autoRange(padding=0)
        self.frames_shown += 1

    @property
    def current(self) -> np.ndarray | None:
        return self._current
