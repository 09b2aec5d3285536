"""The studio driven by a script instead of a user (screenshots, benchmarks): a window on scratch
settings, connected to a fresh built-in world, and a grab of it to a PNG."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import cast

from PySide6.QtWidgets import QApplication

from studio.live_session import LiveSession
from studio.main_window import MainWindow
from studio.qt_wait import spin_until, use_scratch_settings


def open_studio(size: tuple[int, int] = (1600, 940), connect: bool = True) -> tuple[QApplication, MainWindow]:
    app = QApplication.instance() or QApplication(sys.argv)
    use_scratch_settings()  # the user's saved layout must not shape the result
    session = LiveSession()
    window = MainWindow(session)
    window.setProperty("quiet", True)
    window.resize(*size)
    if not connect:
        window.tabs.setCurrentWidget(window.replay)  # the Live view would start a world when shown
    window.show()
    if connect:
        session.host.connect()
        spin_until(lambda: session.host.evaluator is not None and "Connected" in window.live.status.full_text(), 90)
    return cast(QApplication, app), window  # instance() is the QApplication made above, or an earlier one


def save_and_close(app: QApplication, window: MainWindow, path: Path, settle_s: float = 0.8) -> None:
    spin_until(lambda: False, settle_s)  # let the last repaints land
    window.grab().save(str(path))
    print(f"wrote {path}")
    window.close()
    app.processEvents()
