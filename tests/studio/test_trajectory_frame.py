"""The map of a game with no outline (an external game) frames the task, then grows to keep the character in
view: framed on the goal alone, Minetest's start and trail were off the plot."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from widgets.trajectory_plot import TrajectoryPlot


def test_the_frame_grows_to_take_in_the_character_and_never_shrinks(qtbot):
    plot = TrajectoryPlot()
    qtbot.addWidget(plot)
    plot.resize(400, 300)
    plot.show()
    plot.set_goal(-180.0, 140.0, 3.0)
    plot.frame_on(np.array([[-180.0, 140.0]]), margin=12.0)
    assert plot.in_view(-180.0, 140.0) and not plot.in_view(-192.0, 90.0)
    plot.set_position(-192.0, 90.0, 0.0)  # the spawn, 50 m from the goal
    assert plot.in_view(-192.0, 90.0) and plot.in_view(-180.0, 140.0)
    for y in np.linspace(90.0, 60.0, 7):  # walking away: the trail stays on the plot
        plot.set_position(-192.0, float(y), 180.0)
    assert plot.in_view(-192.0, 60.0) and plot.in_view(-180.0, 140.0)


def test_a_map_with_an_outline_keeps_its_fixed_frame(qtbot):
    plot = TrajectoryPlot()
    qtbot.addWidget(plot)
    plot.resize(400, 300)
    plot.show()
    plot.frame_on(np.array([[0.0, 0.0]]), margin=12.0)
    plot.set_backdrop([("solid", np.array([[0.0, 0.0], [50.0, 0.0], [50.0, 50.0], [0.0, 50.0]]))])
    plot.set_position(400.0, 400.0, 0.0)  # off the map: the whole-map frame stays put
    assert not plot.in_view(400.0, 400.0)


def test_a_walk_that_comes_back_to_its_starting_x_is_drawn_whole(qtbot):
    """The path is a trajectory, not a time series: x goes out and back. pyqtgraph's automatic downsampling
    assumes evenly spaced x, and a walk ending near its starting x made it ask for a 10^16-point bin ("array is
    too big", raised in the Live view's sample pull)."""
    plot = TrajectoryPlot()
    qtbot.addWidget(plot)
    plot.resize(400, 300)
    plot.show()
    out = np.linspace(0.0, 20.0, 81)
    xs = np.concatenate([out, out[::-1] + 1e-12])  # east 20 m and back to within a hair of the start
    ys = np.concatenate([np.zeros(81), np.full(81, 3.0)])
    plot.set_path(xs, ys)
    drawn_x, drawn_y = plot.drawn_path()
    assert len(drawn_x) == len(xs) and drawn_y[-1] == pytest.approx(3.0)


def _heading_length(plot: TrajectoryPlot) -> float:
    xs, ys = plot._heading.getData()
    return float(np.hypot(xs[1] - xs[0], ys[1] - ys[0]))


def test_a_game_in_its_own_units_gets_a_readable_grid_heading_and_axes(qtbot):
    """Red Eclipse walks about 80 of its units a second, on a floor hundreds of units wide: the map drew a grid
    line every 20 "metres" (a grey wash), a heading 3 units long (invisible) and axes that said metres."""
    plot = TrajectoryPlot()
    qtbot.addWidget(plot)
    plot.resize(400, 300)
    plot.show()
    plot.set_units("units")
    assert (plot.getAxis("bottom").labelText, plot.getAxis("left").labelText) == ("x (units)", "y (units)")
    plot.frame_on(np.array([[461.0, 563.0], [532.0, 634.0], [900.0, 1400.0]]), margin=96.0)
    (x0, x1), (y0, y1) = plot.getViewBox().viewRange()
    span = max(x1 - x0, y1 - y0)
    assert 3 <= span / plot.grid_spacing <= 10  # a handful of lines across the view, at a round step
    assert plot.grid_spacing in (100.0, 200.0, 500.0)
    plot.set_position(500.0, 600.0, 90.0)
    assert _heading_length(plot) == pytest.approx(0.04 * (x1 - x0))  # a few pixels long, whatever the units
    plot.getViewBox().scaleBy((0.05, 0.05), center=(500.0, 600.0))  # zoomed in 20x (the wheel): still a few pixels
    (x0, x1), _ = plot.getViewBox().viewRange()
    assert _heading_length(plot) == pytest.approx(0.04 * (x1 - x0))

    plot.frame_on(np.array([[0.0, 0.0], [6.0, 4.0]]), margin=2.0)  # a walk of a few metres: the grid follows
    assert plot.grid_spacing in (1.0, 2.0)
    plot.set_units(None)  # a profile that names no units: the axes name none
    assert plot.getAxis("bottom").labelText == "x"


def test_the_grid_is_redrawn_where_the_view_goes(qtbot):
    plot = TrajectoryPlot()
    qtbot.addWidget(plot)
    plot.resize(400, 300)
    plot.show()
    plot.frame_on(np.array([[0.0, 0.0], [40.0, 30.0]]), margin=5.0)
    far = 1_000_000.0  # a game whose coordinates run far from the origin (Minetest's run to 31,000)
    plot.frame_on(np.array([[far, far], [far + 40.0, far + 30.0]]), margin=5.0)
    xs, ys = plot._grid.getData()
    vertical = xs[0::4]  # each line is a pair of points: verticals first in each group of four
    assert vertical.min() < far < vertical.max() and ys.min() < far < ys.max()
