"""`python main.py` (no command): the studio window on the built-in world (or `--backend NAME|PATH`);
`replay PATH` opens a recording.

Before Qt is touched, studio.desktop_check makes sure a window can open at all: a missing system
library of Qt's platform plugin makes Qt abort the process with a misleading message, so the user is
told instead exactly what to install. The game starts only when the Live view is first shown.
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING

from studio.desktop_check import platform_problem

if TYPE_CHECKING:  # Qt is imported only once studio.desktop_check has said a window can open
    from core.backends.profile import BackendProfile
    from studio.main_window import MainWindow


def run_studio(open_path: str | None = None, backend: str = "builtin", attach: str | None = None) -> int:
    problem = platform_problem()
    if problem is not None:
        print(problem.message(), file=sys.stderr)
        return 2
    from studio.logging_setup import configure_logging

    log_file = configure_logging()
    logging.getLogger("studio").info("log file: %s", log_file or "none (stderr only)")
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv)
    app.setApplicationName("PokeGym Studio")
    from core.backends.profile import BackendFileError, load_backend

    try:
        chosen = load_backend(backend)
    except BackendFileError as exc:
        print(f"PokeGym Studio: {exc}", file=sys.stderr)
        return 2
    window = build_studio(open_path, chosen, attach)
    code = int(app.exec())
    del window
    return code


def build_studio(open_path: str | None = None, backend: BackendProfile | None = None,
                 attach: str | None = None) -> MainWindow:
    """The main window, shown: on the Replay view when a path is given (no game is started for it),
    else on the Live view, which starts the game (the built-in world unless `backend` says otherwise),
    or with `attach` drives the one already running."""
    from studio.game_host import GameHost
    from studio.live_session import LiveSession
    from studio.main_window import MainWindow

    window = MainWindow(LiveSession(GameHost(backend=backend, attach=attach)))
    if open_path is not None:
        window.open_path(open_path)  # before show(): the Live view stays hidden, so no world starts
    window.show()
    return window
