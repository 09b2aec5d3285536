"""Fixtures shared by the studio's tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def replay_window(qtbot: Any, settings_dir: Path) -> Iterator[Any]:
    """The studio's main window on its Replay tab, with settings and recordings in the test's folder. The Live
    view is never shown, so no world starts: Replay needs none (a window shown on its Live tab starts one, which
    then renders in real time all test long)."""
    from studio.live_session import LiveSession
    from studio.main_window import MainWindow

    main = MainWindow(LiveSession())
    main.setProperty("quiet", True)  # errors go to the status bar, not to modal dialogs a test cannot answer
    qtbot.addWidget(main)
    main.tabs.setCurrentWidget(main.replay)
    main.show()
    yield main
    main.close()
