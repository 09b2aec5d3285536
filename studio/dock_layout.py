"""Dock arrangements that depend on the screen: a laptop's 720 rows cannot hold every pane of a column."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication, QDockWidget, QMainWindow

SMALL_SCREEN_ROWS = 900  # below this free height, panes of one column share it as tabs


def share_on_small_screens(window: QMainWindow, shown: QDockWidget, tabbed: QDockWidget) -> bool:
    """On a screen with less than SMALL_SCREEN_ROWS free rows, put `tabbed` behind `shown` as a tab (each then
    gets the column's whole height), rather than squeezing both below their readable size. True if it did."""
    screen = window.screen() or QApplication.primaryScreen()
    if screen is None or screen.availableGeometry().height() >= SMALL_SCREEN_ROWS:
        return False
    window.tabifyDockWidget(shown, tabbed)
    shown.raise_()
    return True
