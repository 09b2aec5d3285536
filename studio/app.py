"""`python main.py` (no command): the studio window on the built-in world."""

from __future__ import annotations

import sys

from PySide6.QtWidgets import QApplication

from studio.live_session import LiveSession
from studio.main_window import MainWindow


def run_studio() -> int:
    app = QApplication.instance() or QApplication(sys.argv)
    app.setApplicationName("PokeGym Studio")
    session = LiveSession()
    window = MainWindow(session)
    window.show()
    session.connect_world()
    return int(app.exec())
