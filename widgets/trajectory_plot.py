"""TrajectoryPlot: the character's path seen from above, from evaluator samples, with the start, the
goal, deadlock spans, interventions and an optional map backdrop. Clicking near the path reports the
nearest step (the replay view seeks to it)."""

from __future__ import annotations

import math
import time
from collections import deque
from typing import TypedDict, cast

import numpy as np
import pyqtgraph as pg
from pyqtgraph.GraphicsScene.mouseEvents import MouseClickEvent
from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QPen, QPolygonF
from PySide6.QtWidgets import QGraphicsPolygonItem, QLabel

from core.episode.units import round_length
from widgets.plot_parts import plot_item, plot_scene, view_box

_TAIL = 600  # samples drawn bright, as they came (10 s at 60 Hz); older ones fade into the full path
# Positions are in the game's own units (its memory profile's `units`: metres, Minetest nodes, a game's hundreds
# of units a second), so what is drawn at a fixed size (the heading, a grid step) is sized from the view instead.
GRID_LINES = 10        # at most this many grid lines across the view, and at least a third as many (a round step)
GRID_REACH = 60        # lines drawn each side of the view's centre: pans and zooms within it need no rebuild
HEADING_SHARE = 0.04   # the heading arrow's length, as a share of the view's width
PATH_SPACING = 0.25    # the live full path keeps a point per quarter unit walked: finer than a pixel of the map
LEGEND_MIN_SIZE = (420, 380)
FULL_PATH_REFRESH_S = 0.5
INTERVENTION_STYLE = {  # kind -> (symbol, colour)
    "push_back": ("t", (200, 0, 150)), "turn_around": ("o", (120, 60, 200)), "text": ("star", (0, 150, 160)),
    "human": ("d", (0, 150, 170)),
}
_BACKDROP = {"solid": (QColor(205, 205, 205), QColor(160, 160, 160)),
             "water": (QColor(190, 215, 240), QColor(150, 185, 220))}


def axis_labels(units: str | None) -> tuple[str, str]:
    """The map's axis titles: the ground plane seen from above, in the game's units when its profile says them."""
    suffix = f" ({units})" if units else ""
    return f"x{suffix}", f"y{suffix}"


def thin_path(xy: np.ndarray, spacing: float = PATH_SPACING) -> np.ndarray:
    """A recorded path with about one point per `spacing` units walked (first and last kept): what the
    map can show, at a fraction of the drawing cost. Vectorised; run it off the GUI thread for long paths."""
    xy = np.asarray(xy, dtype=float).reshape(-1, 2)
    if len(xy) < 3:
        return xy
    walked = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(xy, axis=0).T))])
    keep = np.flatnonzero(np.diff(np.floor(walked / spacing)) > 0) + 1
    return xy[np.unique(np.concatenate([[0], keep, [len(xy) - 1]]))]


class _Mark(TypedDict):
    """One intervention or human-step mark, as the scatter item takes it."""

    pos: tuple[float, float]
    symbol: str
    brush: QBrush
    data: tuple[int, str]  # (step, kind)


class TrajectoryPlot(pg.PlotWidget):
    sig_step_clicked = Signal(int)  # the step whose end position is nearest the click

    def __init__(self) -> None:
        super().__init__()
        self.setBackground("w")
        self.setMinimumSize(280, 220)  # below this the map is unreadable and clicks land far off
        self.setAspectLocked(True)
        self._grow_margin: float | None = None  # set by frame_on: the frame grows to keep the character in
        self._grid = pg.PlotCurveItem(connect="pairs", pen=pg.mkPen((228, 228, 228), width=1))
        self._grid.setZValue(-30)  # under the backdrop and everything else
        plot_item(self).addItem(self._grid, ignoreBounds=True)
        self._grid_drawn: tuple[float, float, float] | None = None  # (step, centre x, centre y) of the lines drawn
        self._pose: tuple[float, float, float] | None = None  # x, y, heading of the marker drawn
        view_box(self).sigRangeChanged.connect(self._view_changed)
        self._refresh_grid()
        self.set_units(None)
        legend = self.addLegend(offset=(-4, -4), labelTextSize="7pt", verSpacing=-6)
        legend.setBrush(pg.mkBrush(255, 255, 255, 200))  # readable where it covers the path
        self._legend = legend
        self.setToolTip("Blue: path (recent part bright); dotted grey: the last episode's path, once it ended. "
                        "Red: deadlock spans. Orange circle: goal radius. "
                        "Green dashes: reference route. Green square: start. Marks: interventions and human steps. "
                        "Grey: buildings; blue: water.")
        # A finished episode's trail, kept (dotted grey) while the character is driven on between episodes.
        self._ended_path = self.plot([], [], pen=pg.mkPen((150, 150, 150), width=1,
                                                          style=pg.QtCore.Qt.PenStyle.DotLine))
        self._path = self.plot([], [], pen=pg.mkPen((150, 170, 200), width=1))
        self._tail = self.plot([], [], pen=pg.mkPen((30, 90, 200), width=2), name="path (recent bright)")
        self._deadlocks = self.plot([], [], pen=pg.mkPen((220, 30, 30), width=5), connect="finite",
                                    name="deadlock span")
        self._position = pg.ScatterPlotItem(size=12, brush=pg.mkBrush(220, 40, 40))
        self._heading = self.plot([], [], pen=pg.mkPen((220, 40, 40), width=2))
        self._start = pg.ScatterPlotItem(size=11, symbol="s", brush=pg.mkBrush(40, 160, 60), name="start")
        self._goal = self.plot([], [], pen=pg.mkPen((230, 150, 0), width=2), name="goal radius")
        self._route = self.plot([], [], pen=pg.mkPen((60, 160, 60), width=1.5, style=pg.QtCore.Qt.PenStyle.DashLine),
                                symbol="o", symbolSize=5, symbolBrush=(60, 160, 60), name="reference route")
        self._marks = pg.ScatterPlotItem(size=11, pen=pg.mkPen("w", width=1), name="intervention / takeover")
        self._cursor = pg.ScatterPlotItem(size=16, symbol="+", pen=pg.mkPen((0, 0, 0), width=2))
        for item in (self._position, self._start, self._marks, self._cursor):
            self.addItem(item)
        # No automatic downsampling or clipping to the view: both assume x is evenly spaced and sorted, as in a time
        # series; a walk out and back to its starting x made the downsampling ask for an impossible array. The
        # path keeps one point per PATH_SPACING walked, which keeps it small instead.
        self._path.setDownsampling(auto=False)
        self._path.setClipToView(False)
        self._backdrop: list[QGraphicsPolygonItem] = []
        self._path_buffer = np.zeros((0, 2))
        self._recent: deque[tuple[float, float]] = deque(maxlen=_TAIL)
        self._path_refreshed = 0.0
        self._step_xy = np.zeros((0, 2))
        self._steps = np.zeros(0, dtype=np.int64)
        self._step_buffer, self._xy_buffer = self._steps, self._step_xy
        self._mark_points: list[_Mark] = []
        self.points = 0
        # Says why the map is empty (an episode that recorded no positions), over the plot rather than in a
        # tooltip, so an empty map never reads as "the character stood still".
        self.note = QLabel(self)
        self.note.setWordWrap(True)
        self.note.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.note.setStyleSheet("QLabel { background: rgba(255, 255, 255, 220); color: #3c4043; padding: 8px; }")
        self.note.hide()
        plot_scene(self).sigMouseClicked.connect(self._clicked)

    def set_note(self, text: str) -> None:
        """Show `text` over the plot ("" hides it)."""
        self.note.setText(text)
        self.note.setVisible(bool(text))
        self._place_note()

    def _place_note(self) -> None:
        margin = 12
        self.note.setGeometry(margin, margin, max(1, self.width() - 2 * margin), max(1, self.height() // 3))

    def set_units(self, units: str | None) -> None:
        """Name the game's units on the axes (None: the profile does not say, and the axes name none)."""
        bottom, left = axis_labels(units)
        self.setLabel("bottom", bottom)
        self.setLabel("left", left)

    @property
    def grid_spacing(self) -> float:
        """The distance between grid lines now drawn, in the game's units."""
        return self._grid_drawn[0] if self._grid_drawn is not None else 0.0

    def _view_changed(self, *_args: object) -> None:
        self._refresh_grid()
        self._draw_heading()  # its length follows the zoom

    def _refresh_grid(self) -> None:
        """Grid lines at a round step for the view, drawn as one static item (pyqtgraph's axis grid redraws
        tick lines on every paint and cost most of the plot's paint time, 7 of 10 ms). It is redrawn only when
        the view's step changes or the view leaves the lines drawn: a game in hundreds of units and one in
        metres both get a readable grid."""
        (x0, x1), (y0, y1) = view_box(self).viewRange()
        step = round_length(max(x1 - x0, y1 - y0) / GRID_LINES)
        reach = step * GRID_REACH
        drawn = self._grid_drawn
        if drawn is not None and drawn[0] == step and abs((x0 + x1) / 2 - drawn[1]) < reach / 2 \
                and abs((y0 + y1) / 2 - drawn[2]) < reach / 2:
            return
        cx, cy = round((x0 + x1) / 2 / step) * step, round((y0 + y1) / 2 / step) * step
        offsets = np.arange(-GRID_REACH, GRID_REACH + 1) * step
        ends = np.full_like(offsets, reach)
        xs = np.column_stack([cx + offsets, cx + offsets, cx - ends, cx + ends]).ravel()
        ys = np.column_stack([cy - ends, cy + ends, cy + offsets, cy + offsets]).ravel()
        self._grid.setData(xs, ys)
        self._grid_drawn = (step, cx, cy)

    # -- the path -------------------------------------------------------------------------------
    def set_path(self, xs: np.ndarray, ys: np.ndarray) -> None:
        """Replace the path data in place (cheap for tens of thousands of samples)."""
        self.points = len(xs)
        self._path.setData(xs, ys)
        self._tail.setData(xs[-_TAIL:], ys[-_TAIL:])

    def drawn_path(self) -> tuple[np.ndarray, np.ndarray]:
        """The path's points as the plot draws them."""
        xs, ys = self._path.getData()
        return (np.asarray(xs if xs is not None else [], float), np.asarray(ys if ys is not None else [], float))

    def append_path(self, xs: np.ndarray, ys: np.ndarray) -> None:
        """Add samples to the path. The bright tail shows the last samples as they came; the full path keeps
        one point per PATH_SPACING walked (a character standing still adds nothing), so a session of hours
        stays small. Storage grows by doubling, and the full path, whose redraw grows with its length, is
        refreshed a few times a second while the tail follows every call."""
        if len(xs) == 0:
            return
        self._recent.extend(zip(np.asarray(xs, float).tolist(), np.asarray(ys, float).tolist()))
        recent = np.asarray(self._recent)
        self._tail.setData(recent[:, 0], recent[:, 1])
        points = self._spaced(np.column_stack([xs, ys]))
        count, extra = self.points, len(points)
        if extra == 0:
            return
        if count + extra > len(self._path_buffer):
            self._path_buffer = np.resize(self._path_buffer, (max(1024, 2 * (count + extra)), 2))
        self._path_buffer[count:count + extra] = points
        view = self._path_buffer[:count + extra]
        self.points = count + extra
        now = time.monotonic()
        if now - self._path_refreshed >= FULL_PATH_REFRESH_S:
            self._path_refreshed = now
            self._path.setData(view[:, 0], view[:, 1])

    def _spaced(self, points: np.ndarray) -> np.ndarray:
        """The points at least PATH_SPACING from the last one kept (a slow walk still adds up)."""
        last = self._path_buffer[self.points - 1] if self.points else None
        kept = []
        for x, y in points.tolist():
            if last is None or (x - last[0]) ** 2 + (y - last[1]) ** 2 >= PATH_SPACING ** 2:
                kept.append((x, y))
                last = (x, y)
        return np.asarray(kept, dtype=float).reshape(-1, 2)

    def set_position(self, x: float, y: float, heading_deg: float) -> None:
        if not (math.isfinite(x) and math.isfinite(y)):
            self._pose = None
            self._position.setData([], [])
            self._heading.setData([], [])
            return
        self._position.setData([x], [y])
        self._pose = (x, y, heading_deg)
        if self._grow_margin is not None:
            self._keep_in_view(x, y, self._grow_margin)
        self._draw_heading()

    def _draw_heading(self) -> None:
        if self._pose is None:
            return
        x, y, heading_deg = self._pose
        (x0, x1), _ = view_box(self).viewRange()
        length = (x1 - x0) * HEADING_SHARE  # a few pixels long at any zoom, in any game's units
        dx, dy = -math.sin(math.radians(heading_deg)) * length, math.cos(math.radians(heading_deg)) * length
        self._heading.setData([x, x + dx], [y, y + dy])

    def set_start(self, x: float, y: float) -> None:
        self._start.setData([x], [y])

    def set_goal(self, x: float, y: float, radius: float) -> None:
        angles = np.linspace(0, 2 * np.pi, 48)
        self._goal.setData(x + radius * np.cos(angles), y + radius * np.sin(angles))

    def set_route(self, points: list[tuple[float, float]]) -> None:
        xs, ys = ([p[0] for p in points], [p[1] for p in points]) if points else ([], [])
        self._route.setData(xs, ys)

    # -- per-step annotations ----------------------------------------------------------------
    def set_steps(self, steps: np.ndarray, xy: np.ndarray) -> None:
        """Where each step ended (used for deadlock spans, marks and click-to-seek). Steps whose position is
        unknown (NaN: a file without evaluator samples) are left out rather than drawn at a made-up place."""
        steps, xy = np.asarray(steps, dtype=np.int64), np.asarray(xy, dtype=float).reshape(-1, 2)
        known = np.isfinite(xy).all(axis=1)
        self._steps, self._step_xy = steps[known], xy[known]
        self._step_buffer, self._xy_buffer = self._steps.copy(), self._step_xy.copy()

    def add_step(self, step: int, x: float, y: float) -> None:
        if not (np.isfinite(x) and np.isfinite(y)):
            return  # position unknown at this step: nothing to draw it at
        count = len(self._steps)
        if count == len(self._step_buffer):  # grow by doubling: appends stay O(1) on long episodes
            self._step_buffer = np.resize(self._step_buffer, max(64, 2 * count))
            self._xy_buffer = np.resize(self._xy_buffer, (max(64, 2 * count), 2))
        self._step_buffer[count] = step
        self._xy_buffer[count] = (x, y)
        self._steps, self._step_xy = self._step_buffer[:count + 1], self._xy_buffer[:count + 1]

    def set_deadlocks(self, spans: list[tuple[int, int]]) -> None:
        """Draw each span (first and last step, inclusive) over the path, from the step before it."""
        xs: list[float] = []
        ys: list[float] = []
        (x0, x1), _ = view_box(self).viewRange()
        stub = (x1 - x0) / 100
        for start, end in spans:
            chosen = self._step_xy[(self._steps >= start - 1) & (self._steps <= end)]
            if len(chosen) == 0:
                continue
            if len(chosen) == 1:  # a span standing still: draw a short stub so it shows
                chosen = np.vstack([chosen, chosen + stub])
            xs += [*chosen[:, 0], np.nan]
            ys += [*chosen[:, 1], np.nan]
        self._deadlocks.setData(np.asarray(xs), np.asarray(ys))

    def add_mark(self, step: int, kind: str) -> None:
        """An intervention or a human step at `step` (drawn where that step ended)."""
        self.add_marks([(step, kind)])

    def add_marks(self, marks: list[tuple[int, str]]) -> None:
        """Several marks with one redraw (a replayed episode brings all of its marks at once)."""
        for step, kind in marks:
            index = np.searchsorted(self._steps, step)
            if index >= len(self._steps) or self._steps[index] != step:
                continue
            symbol, colour = INTERVENTION_STYLE.get(kind, ("x", (90, 90, 90)))
            x, y = self._step_xy[index]
            self._mark_points.append({"pos": (x, y), "symbol": symbol, "brush": pg.mkBrush(*colour),
                                      "data": (step, kind)})
        if marks:
            self._marks.setData(self._mark_points)

    def marks(self) -> list[tuple[int, str]]:
        return [p["data"] for p in self._mark_points]

    def set_cursor(self, step: int | None) -> None:
        if step is None or len(self._steps) == 0:
            points = cast(np.ndarray, self._cursor.data)  # its points (an attribute that hides QGraphicsItem.data())
            if len(points):  # a live view clears it on every step: rebuilding an empty item costs
                self._cursor.setData([], [])
            return
        index = min(int(np.searchsorted(self._steps, step)), len(self._steps) - 1)
        self._cursor.setData([self._step_xy[index, 0]], [self._step_xy[index, 1]])

    # -- backdrop --------------------------------------------------------------------------------
    def set_backdrop(self, shapes: list[tuple[str, np.ndarray]]) -> None:
        """Footprints under everything else: buildings grey, water blue."""
        for item in self._backdrop:
            self.removeItem(item)
        self._backdrop = []
        for kind, points in shapes:
            fill, edge = _BACKDROP.get(kind, _BACKDROP["solid"])
            item = QGraphicsPolygonItem(QPolygonF([QPointF(float(x), float(y)) for x, y in points]))
            item.setBrush(QBrush(fill))
            item.setPen(QPen(edge, 0))
            item.setZValue(-20)
            self.addItem(item)
            self._backdrop.append(item)
        if shapes:
            self._grow_margin = None
            # A fixed frame on the whole map: re-fitting the view to the data on every update costs
            # more than everything else in the live view (the user can still pan, zoom and press "A").
            every = np.vstack([points for _, points in shapes])
            view_box(self).setRange(xRange=(every[:, 0].min(), every[:, 0].max()),
                                      yRange=(every[:, 1].min(), every[:, 1].max()), padding=0.02)

    def frame_on(self, points: np.ndarray, margin: float) -> None:
        """Frame these points with a margin (in the game's units). With no map to frame on (an external game), the frame
        then grows to take in the character wherever it goes: framed on the goal alone, the start and the
        trail were off the plot (Minetest's map looked empty). It never shrinks, and costs one comparison."""
        low, high = points.min(axis=0) - margin, points.max(axis=0) + margin
        view_box(self).setRange(xRange=(low[0], high[0]), yRange=(low[1], high[1]), padding=0)
        self._grow_margin = margin

    def _keep_in_view(self, x: float, y: float, margin: float) -> None:
        (x0, x1), (y0, y1) = view_box(self).viewRange()
        if x0 <= x <= x1 and y0 <= y <= y1:
            return
        view_box(self).setRange(xRange=(min(x0, x - margin), max(x1, x + margin)),
                                  yRange=(min(y0, y - margin), max(y1, y + margin)), padding=0)

    def in_view(self, x: float, y: float) -> bool:
        (x0, x1), (y0, y1) = view_box(self).viewRange()
        return x0 <= x <= x1 and y0 <= y <= y1

    @property
    def backdrop_shapes(self) -> int:
        return len(self._backdrop)

    def clear_path(self) -> None:
        """Forget the trail (the character was reset or the world restarted)."""
        self.set_path(np.zeros(0), np.zeros(0))
        self._recent.clear()
        self._path_buffer = np.zeros((0, 2))  # the old one was handed to the plot: never overwrite it

    def end_episode_path(self) -> None:
        """The episode ended: its trail stays as the ended episode's (dotted grey), and the live trail starts
        afresh, so driving on between episodes draws a trail of its own instead of lengthening the episode's."""
        path = self._path_buffer[:self.points].copy()
        self._ended_path.setData(path[:, 0], path[:, 1])
        self.clear_path()

    @property
    def ended_path(self) -> np.ndarray:
        """The ended episode's trail, as drawn (N, 2)."""
        xs, ys = self._ended_path.getData()
        return np.zeros((0, 2)) if xs is None else np.column_stack([xs, ys])

    def clear_episode(self) -> None:
        self.clear_path()
        self._ended_path.setData([], [])
        self.set_steps(np.zeros(0, dtype=np.int64), np.zeros((0, 2)))
        self._mark_points = []
        self._marks.setData([])
        self._deadlocks.setData([], [])
        self._cursor.setData([], [])

    def resizeEvent(self, event: object) -> None:
        super().resizeEvent(event)
        note = self.__dict__.get("note")  # Qt resizes the plot while it is still being built
        if note is not None:
            self._place_note()
        # In a small dock the legend would hide the map it explains; the tooltip says the same.
        legend = self.__dict__.get("_legend")  # Qt resizes the plot while it is still being built
        if legend is not None:
            legend.setVisible(self.width() >= LEGEND_MIN_SIZE[0] and self.height() >= LEGEND_MIN_SIZE[1])

    # -- clicks --------------------------------------------------------------------------------
    def _clicked(self, event: MouseClickEvent) -> None:
        if len(self._steps) == 0:
            return
        scene_pos = event.scenePos()
        if not view_box(self).sceneBoundingRect().contains(scene_pos):
            return
        point = view_box(self).mapSceneToView(scene_pos)
        self.sig_step_clicked.emit(self.nearest_step(point.x(), point.y()))

    def nearest_step(self, x: float, y: float) -> int:
        distances = np.hypot(self._step_xy[:, 0] - x, self._step_xy[:, 1] - y)
        return int(self._steps[int(np.argmin(distances))])
