"""SoundPane: what the game sounds like, drawn: a scrolling stereo spectrogram, a level meter per ear, and the
speaker's mute button and volume.

The spectrogram takes columns of levels (0..255, core/audio/columns.py), left ear above, right below, low
frequencies at the bottom of each, newest on the right. It is drawn by two pyqtgraph ImageItems on their
fast path: uint8 images through a 256-colour lookup table (Qt's indexed image, no float conversion), so a
repaint costs a copy of a few hundred columns. The widget knows nothing of where the sound comes from:
Live pushes columns as they are made, Replay shows the stretch that ends at its cursor.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, Signal, Slot
from PySide6.QtGui import QColor, QPainter, QPaintEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QSlider, QToolButton, QVBoxLayout, QWidget

from core.audio.columns import LEVEL_FLOOR_DB, Levels
from core.audio.picture import colorize

KEEP_COLUMNS = 400  # 4 s at 100 columns a second
LUT = colorize(np.linspace(0.0, 1.0, 256))  # the same dark-to-bright ramp as the README's pictures
TICK_HZ = (100, 1000, 5000)


class LevelMeter(QWidget):
    """One bar per channel, RMS filled and the peak as a line, on a dB scale from LEVEL_FLOOR_DB to 0."""

    def __init__(self) -> None:
        super().__init__()
        self.levels: Levels | None = None
        self.setFixedWidth(34)
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Expanding)

    def set_levels(self, levels: Levels | None) -> None:
        self.levels = levels
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.fillRect(self.rect(), QColor(30, 30, 30))
        levels = self.levels
        if levels is None:
            painter.end()
            return
        count = len(levels.rms_db)
        width = (self.width() - 4) / max(1, count)
        height = self.height() - 4
        for channel, (rms, peak) in enumerate(zip(levels.rms_db, levels.peak_db, strict=True)):
            x = 2 + channel * width
            share = (rms - LEVEL_FLOOR_DB) / -LEVEL_FLOOR_DB
            colour = QColor(230, 70, 50) if peak > -1.0 else QColor(80, 200, 90)  # red: at full scale
            painter.fillRect(QRectF(x + 1, 2 + height * (1 - share), width - 2, height * share), colour)
            y = 2 + height * (1 - (peak - LEVEL_FLOOR_DB) / -LEVEL_FLOOR_DB)
            painter.fillRect(QRectF(x + 1, y, width - 2, 2), QColor(240, 240, 240))
        painter.end()


class SoundPane(QWidget):
    sig_muted = Signal(bool)
    sig_volume = Signal(float)  # 0..1

    def __init__(self) -> None:
        super().__init__()
        self.mute = QToolButton()
        self.mute.setText("Mute")
        self.mute.setCheckable(True)
        self.mute.setToolTip("Silence the speaker (the spectrogram goes on)")
        self.volume = QSlider(Qt.Orientation.Horizontal)
        self.volume.setRange(0, 100)
        self.volume.setValue(80)
        self.volume.setToolTip("Volume")
        self.volume.setMaximumWidth(140)
        self.caption = QLabel("")
        self.caption.setStyleSheet("color: #666")
        self.caption.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        header = QHBoxLayout()
        header.addWidget(self.mute)
        header.addWidget(QLabel("Volume"))
        header.addWidget(self.volume)
        header.addStretch(1)
        self.plots = pg.GraphicsLayoutWidget()
        self.plots.setBackground("w")
        self.plots.setMinimumHeight(104)  # two ears and a time axis; more and the studio no longer fits 1280x720
        self.images: list[pg.ImageItem] = []
        self.views: list[pg.PlotItem] = []
        for row, name in enumerate(("left", "right")):
            plot = self.plots.ci.addPlot(row=row, col=0)
            plot.setMenuEnabled(False)
            plot.getViewBox().setMouseEnabled(x=False, y=False)
            plot.hideButtons()
            plot.setLabel("left", name)
            plot.getAxis("bottom").setStyle(showValues=row == 1)
            image = pg.ImageItem()
            image.setLookupTable(LUT)
            plot.addItem(image)
            self.images.append(image)
            self.views.append(plot)
        self.views[1].setLabel("bottom", "seconds ago")
        self.meter = LevelMeter()
        body = QHBoxLayout()
        body.setContentsMargins(0, 0, 0, 0)
        body.addWidget(self.plots, 1)
        body.addWidget(self.meter)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(header)
        layout.addWidget(self.caption)  # a line of its own: a narrow dock would cut it off beside the controls
        self.caption.setVisible(False)
        layout.addLayout(body, 1)
        self.columns_per_second = 100.0
        self.row_hz = np.geomspace(40.0, 10_000.0, 80)
        self._data = np.zeros((2, len(self.row_hz), 0), np.uint8)
        self.columns_shown = 0  # columns pushed since the last clear (tests: the pane really draws)
        self.mute.toggled.connect(self.sig_muted)
        self.volume.valueChanged.connect(lambda value: self.sig_volume.emit(value / 100.0))
        self._lay_out_axes()

    # -- what is drawn ----------------------------------------------------------------------------
    def set_scale(self, columns_per_second: float, row_hz: np.ndarray) -> None:
        """The columns' time step and the frequency of each row (from the ColumnMaker that makes them)."""
        if columns_per_second != self.columns_per_second or not np.array_equal(row_hz, self.row_hz):
            self.columns_per_second, self.row_hz = columns_per_second, np.asarray(row_hz, float)
            self.clear()
            self._lay_out_axes()

    def push_columns(self, columns: np.ndarray) -> None:
        """New columns (channels, rows, n) uint8 at the right; the oldest scroll out of view."""
        if columns.shape[1] != self._data.shape[1] or columns.shape[0] != self._data.shape[0]:
            self._data = np.zeros((columns.shape[0], columns.shape[1], 0), np.uint8)
        self._data = np.concatenate([self._data, columns], axis=2)[:, :, -KEEP_COLUMNS:]
        self.columns_shown += columns.shape[2]
        self._draw()

    def show_columns(self, columns: np.ndarray) -> None:
        """Exactly these columns, ending at the right edge (Replay: the stretch up to the cursor)."""
        self._data = columns[:, :, -KEEP_COLUMNS:]
        self.columns_shown += columns.shape[2]
        self._draw()

    def clear(self) -> None:
        self._data = np.zeros((self._data.shape[0], len(self.row_hz), 0), np.uint8)
        self.columns_shown = 0
        self.meter.set_levels(None)
        self._draw()

    def set_levels(self, levels: Levels | None) -> None:
        self.meter.set_levels(levels)

    def set_caption(self, text: str) -> None:
        self.caption.setText(text)
        self.caption.setToolTip(text)
        self.caption.setVisible(bool(text))

    # -- the speaker's controls ------------------------------------------------------------------
    @Slot(bool)
    def set_muted(self, muted: bool) -> None:
        self.mute.setChecked(muted)

    def set_volume(self, volume: float) -> None:
        self.volume.setValue(round(max(0.0, min(1.0, volume)) * 100))

    # -- drawing ----------------------------------------------------------------------------------
    def _draw(self) -> None:
        count = self._data.shape[2]
        for channel, image in enumerate(self.images):
            if channel < self._data.shape[0] and count:
                # col-major (x, y): column index across, row 0 (the lowest frequency) at the bottom
                image.setImage(np.ascontiguousarray(self._data[channel].T), autoLevels=False)
                image.setRect(QRectF(-count / self.columns_per_second, 0, count / self.columns_per_second,
                                     len(self.row_hz)))
            else:
                image.clear()

    def _lay_out_axes(self) -> None:
        """Seconds ago along the bottom, a few frequencies on the left (the rows are logarithmic)."""
        span = KEEP_COLUMNS / self.columns_per_second
        rows = len(self.row_hz)
        ticks = [(float(np.searchsorted(self.row_hz, hz)), f"{hz // 1000}k" if hz >= 1000 else str(hz))
                 for hz in TICK_HZ if self.row_hz[0] <= hz <= self.row_hz[-1]]
        for plot in self.views:
            plot.getViewBox().setXRange(-span, 0, padding=0)
            plot.getViewBox().setYRange(0, rows, padding=0)
            plot.getAxis("left").setTicks([ticks, []])
            plot.getAxis("left").setWidth(44)
