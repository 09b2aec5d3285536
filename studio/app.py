"""`python main.py` (no command): the studio window on the built-in world (or `--backend NAME|PATH`);
`replay PATH` opens a recording."""

from __future__ import annotations

import os
import sys

from PySide6.QtWidgets import QApplication

from studio.live_session import LiveSession
from studio.main_window import MainWindow


def no_display_reason() -> str | None:
    """Why Qt could not open a window here, said before Qt aborts the process over it."""
    if not sys.platform.startswith("linux") or os.environ.get("QT_QPA_PLATFORM"):
        return None
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return None
    return ("no display: DISPLAY and WAYLAND_DISPLAY are unset. Run the studio in a desktop session, "
            "under `xvfb-run python main.py`, or headless with QT_QPA_PLATFORM=offscreen (no window is shown). "
            "Every command except the studio works without a display.")


def run_studio(open_path: str | None = None, backend: str = "builtin") -> int:
    reason = no_display_reason()
    if reason is not None:
        print(f"PokeGym Studio: {reason}", file=sys.stderr)
        return 2
    app = QApplication.instance() or QApplication(sys.argv)
    app.setApplicationName("PokeGym Studio")
    from core.backends.profile import BackendFileError, load_backend

    try:
        chosen = load_backend(backend)
    except BackendFileError as exc:
        print(f"PokeGym Studio: {exc}", file=sys.stderr)
        return 2
    session = LiveSession(backend=chosen)
    window = MainWindow(session)
    window.show()
    session.connect_world()
    if open_path is not None:
        window.open_path(open_path)
    return int(app.exec())
