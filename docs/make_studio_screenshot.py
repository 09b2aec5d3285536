"""Regenerate the README's live-window screenshot: `QT_QPA_PLATFORM=offscreen python docs/make_studio_screenshot.py`."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication

from studio.live_session import LiveSession
from studio.main_window import MainWindow

OUT = Path(__file__).resolve().parent / "images" / "studio_live.png"


def wait_until(app: QApplication, condition: object, timeout_ms: int = 60_000) -> None:
    loop = QEventLoop()
    timer = QTimer()
    timer.timeout.connect(lambda: loop.quit() if condition() else None)  # type: ignore[operator]
    timer.start(50)
    QTimer.singleShot(timeout_ms, loop.quit)
    loop.exec()


def main() -> None:
    app = QApplication.instance() or QApplication(sys.argv)
    session = LiveSession()
    window = MainWindow(session)
    window.setProperty("quiet", True)
    window.resize(1500, 860)
    window.show()
    session.connect_world()
    wait_until(app, lambda: session.evaluator is not None and "Connected" in window.status.text())
    window.task_box.setCurrentText("q08_site_navigation")
    session.start_episode("q08_site_navigation", "goal_only", "random", intervention="physical", budget=60)
    wait_until(app, lambda: window.reasoning.count >= 25)
    session.pause()
    wait_until(app, lambda: False, 800)
    window.grab().save(str(OUT))
    print(f"wrote {OUT}")
    window.close()


if __name__ == "__main__":
    main()
