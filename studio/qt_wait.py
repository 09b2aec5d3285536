"""Run the Qt event loop until a condition holds (for scripts and benchmarks that drive the studio
without a user; tests use pytest-qt's waitUntil instead)."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections.abc import Callable

from PySide6.QtCore import QEventLoop, QSettings, QTimer


def spin_until(condition: Callable[[], bool], seconds: float, check_ms: int = 20) -> bool:
    """Process events until `condition()` is true or `seconds` pass; returns whether it held."""
    loop = QEventLoop()
    check = QTimer()
    check.timeout.connect(lambda: loop.quit() if condition() else None)
    check.start(check_ms)
    QTimer.singleShot(int(seconds * 1000), loop.quit)
    if not condition():
        loop.exec()
    check.stop()
    return condition()


def use_scratch_settings() -> None:
    """Point QSettings at a throwaway folder, so scripted runs neither read nor change the user's."""
    folder = tempfile.mkdtemp(prefix="pokegym-settings-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    QSettings.setPath(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, folder)
