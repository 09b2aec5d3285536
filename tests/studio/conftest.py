"""Fixtures shared by the studio's tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def studio_settings(tmp_path: Path) -> Path:
    """QSettings in the test's own folder (set before any window reads them)."""
    from PySide6.QtCore import QSettings

    folder = tmp_path / "settings"
    QSettings.setPath(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, str(folder))
    return folder


@pytest.fixture
def replay_window(qtbot: Any, studio_settings: Path) -> Iterator[Any]:
    """The studio's main window on its Replay tab. The Live view is never shown, so no world starts: Replay
    needs none (a window shown on its Live tab starts one, which then renders in real time all test long)."""
    from studio.live_session import LiveSession
    from studio.main_window import MainWindow

    main = MainWindow(LiveSession())
    main.setProperty("quiet", True)  # errors go to the status bar, not to modal dialogs a test cannot answer
    qtbot.addWidget(main)
    main.tabs.setCurrentWidget(main.replay)
    main.show()
    yield main
    main.close()
