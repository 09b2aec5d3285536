"""The parts of a pyqtgraph plot, typed. pyqtgraph declares a PlotWidget's plot item and that item's view box
Optional, though a PlotWidget always has both; and a PlotWidget forwards setXRange, setRange and the like to
its plot item, and so to the view box, only at run time (statically they are GraphicsView's own, other,
methods). Code that calls them through these functions calls what runs, with its real signature."""

from __future__ import annotations

from typing import cast

import pyqtgraph as pg
from PySide6.QtWidgets import QGraphicsGridLayout


def plot_item(plot: pg.PlotWidget) -> pg.PlotItem:
    return cast(pg.PlotItem, plot.getPlotItem())


def view_box(plot: pg.PlotWidget) -> pg.ViewBox:
    return cast(pg.ViewBox, plot_item(plot).getViewBox())


def plot_layout(plot: pg.PlotWidget) -> QGraphicsGridLayout:
    """The plot item's grid layout (an attribute that hides QGraphicsWidget.layout())."""
    return cast(QGraphicsGridLayout, plot_item(plot).layout)


def plot_scene(plot: pg.PlotWidget | pg.GraphicsLayoutWidget) -> pg.GraphicsScene:
    """The widget's scene: pyqtgraph's GraphicsScene, with its mouse signals."""
    return cast(pg.GraphicsScene, plot.scene())
