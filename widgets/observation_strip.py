"""ObservationStrip: thumbnails of the extra images an agent was given at a step (previous frame,
left view, right view, the picture of its last step's sound), so the user sees exactly what the model saw
besides the main frame."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

KINDS = ("previous", "left", "right", "hearing")
_NOT_THE_AGENT = {"human": "a human drove (the frame shown is what they saw)",
                  "intervention": "an intervention moved the character"}
_TITLES = {"current": "current", "previous": "previous frame", "left": "left view", "right": "right view",
           "hearing": "sound heard (spectrogram)"}


class _Thumbnail(QWidget):
    def __init__(self, title: str) -> None:
        super().__init__()
        self.title = QLabel(title)
        self.view = pg.GraphicsLayoutWidget()
        self.view.setBackground("k")
        self.view.setFixedSize(144, 81)
        box = self.view.ci.addViewBox(lockAspect=True, enableMouse=False)
        box.invertY(True)
        self.image = pg.ImageItem(axisOrder="row-major")
        box.addItem(self.image)
        self.box = box
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.view)
        self.pixels: np.ndarray | None = None

    def set_pixels(self, pixels: np.ndarray | None) -> None:
        """The image to show, or None to clear it. (Not `show`: that is QWidget's, and it makes a widget visible.)"""
        self.pixels = pixels
        if pixels is None:
            self.image.clear()
            return
        self.image.setImage(pixels, autoLevels=False, levels=None)
        self.box.autoRange(padding=0)


class ObservationStrip(QWidget):
    def __init__(self, kinds: tuple[str, ...] = KINDS) -> None:
        super().__init__()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        self.caption = QLabel("Images given to the agent appear here at each step.")
        self.caption.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        outer = QVBoxLayout()
        outer.addWidget(self.caption)
        row = QHBoxLayout()
        outer.addLayout(row)
        layout.addLayout(outer)
        self.thumbnails = {kind: _Thumbnail(_TITLES[kind]) for kind in kinds}
        for thumbnail in self.thumbnails.values():
            row.addWidget(thumbnail)
            thumbnail.setVisible(False)  # shown only for the images an agent is actually given
        row.addStretch(1)
        self.step = 0

    def show_images(self, step: int, images: dict[str, np.ndarray | None], source: str = "agent") -> None:
        """`source` is the step's: on a human or intervention step the agent was given nothing at all."""
        self.step = step
        given = [kind for kind in self.thumbnails if images.get(kind) is not None]
        for kind, thumbnail in self.thumbnails.items():
            thumbnail.set_pixels(images.get(kind))
            thumbnail.setVisible(kind in given)
        names = ", ".join(_TITLES[k] for k in given)
        if source in _NOT_THE_AGENT:
            self.caption.setText(f"Step {step}: {_NOT_THE_AGENT[source]}; the agent was not asked")
        elif given:
            self.caption.setText(f"Step {step}: images given to the agent besides the current frame: {names}")
        else:
            self.caption.setText(f"Step {step}: the agent was given the current frame only")

    def shown_kinds(self) -> list[str]:
        return [kind for kind, t in self.thumbnails.items() if t.pixels is not None]
