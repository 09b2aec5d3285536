"""Fixtures shared by the Replay view's tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def settings(settings_dir: Path) -> Path:
    """The test's own settings, with an annotator already named (no dialog asks at the first label)."""
    from PySide6.QtCore import QSettings

    QSettings("PokeGym", "Studio").setValue("replay/annotator", "alice")
    return settings_dir


@pytest.fixture
def window(settings: Path, replay_window: Any) -> Any:
    return replay_window
