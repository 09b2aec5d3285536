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
