"""FrameView: shows RGB frames with pyqtgraph's fast path (uint8, row-major, no levels, no LUT),
with optional text overlays drawn over the image (pad input, step / budget)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QFont

_OVERLAY_HTML = '<div style="background-color: rgba(0, 0, 0, 150); color: #f4f4f4; padding: 3px">{}</div>'


class FrameView(pg.GraphicsLayoutWidget):
    def __init__(self) -> None:
        super().__init__()
        self.setBackground("k")
        self._view = self.ci.addViewBox(lockAspect=True, enableMouse=False)
        self._view.invertY(True)
        self._image = pg.ImageItem(axisOrder="row-major")
        self._view.addItem(self._image)
        font = QFont("monospace")
        font.setStyleHint(QFont.StyleHint.Monospace)
        font.setPointSize(9)
        self._corners: dict[str, pg.TextItem] = {}
        self._texts: dict[str, str] = {}
        for corner, anchor in (("top_left", (0, 0)), ("top_right", (1, 0))):
            item = pg.TextItem(anchor=anchor)
            item.setFont(font)
            item.setZValue(10)
            self._view.addItem(item)
            self._corners[corner] = item
        self.frames_shown = 0
        self.overlays_visible = True
        self._current: np.ndarray | None = None  # kept alive: the ImageItem may point into it

    def show_frame(self, pixels: np.ndarray) -> None:
        """Display a frame. The caller hands over `pixels` and must not modify it afterwards."""
        first = self._current is None or self._current.shape != pixels.shape
        self._current = pixels
        self._image.setImage(pixels, autoLevels=False, levels=None)
        if first:
            self._view.autoRange(padding=0)
            self._corners["top_right"].setPos(pixels.shape[1], 0)
        self.frames_shown += 1

    def set_overlay(self, corner: str, text: str) -> None:
        """Text in a corner ("top_left" or "top_right"); empty text hides it. Lines split on newlines."""
        shown = text if self.overlays_visible else ""
        if self._texts.get(corner) == shown:
            return  # re-laying out text each frame is the expensive part
        self._texts[corner] = shown
        self._corners[corner].setHtml(_OVERLAY_HTML.format(shown.replace("\n", "<br>")) if shown else "")

    def overlay_text(self, corner: str) -> str:
        return self._texts.get(corner, "")

    def set_overlays_visible(self, visible: bool) -> None:
        self.overlays_visible = visible
        if not visible:
            for corner, item in self._corners.items():
                item.setHtml("")
                self._texts[corner] = ""

    @property
    def current(self) -> np.ndarray | None:
        return self._current
