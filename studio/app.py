"""`python main.py` (no command): the studio window on the built-in world; `replay PATH` opens a recording."""

from __future__ import annotations

import sys

from PySide6.QtWidgets import QApplication

from studio.live_session import LiveSession
from studio.main_window import MainWindow


def run_studio(open_path: str | None = None) -> int:
    app = QApplication.instance() or QApplication(sys.argv)
    app.setApplicationName("PokeGym Studio")
    session = LiveSession()
    window = MainWindow(session)
    window.show()
    session.connect_world()
    if open_path is not None:
        window.open_path(open_path)
    return int(app.exec())
