"""Regenerate the README's live-window screenshot: `QT_QPA_PLATFORM=offscreen python docs/make_studio_screenshot.py`."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PySide6.QtWidgets import QApplication

from studio.live_controls import LiveChoices
from studio.live_session import LiveSession
from studio.main_window import MainWindow
from studio.qt_wait import spin_until, use_scratch_settings

OUT = Path(__file__).resolve().parent / "images" / "studio_live.png"


def main() -> None:
    app = QApplication.instance() or QApplication(sys.argv)
    use_scratch_settings()  # the user's saved layout must not shape the picture
    session = LiveSession()
    window = MainWindow(session)
    window.setProperty("quiet", True)
    window.resize(1600, 940)
    window.show()
    session.connect_world()
    spin_until(lambda: session.evaluator is not None and "Connected" in window.live.status.text(), 90)
    window.live.controls.task.setCurrentText("q08_site_navigation")
    window.live.controls.side_views.setChecked(True)
    window.live.controls.previous_frame.setChecked(True)
    session.start_episode(LiveChoices("q08_site_navigation", intervention="physical", budget=60,
                                      previous_frame=True, side_views=True))
    spin_until(lambda: window.live.reasoning.count >= 30, 120)
    session.pause()
    spin_until(lambda: False, 0.8)
    window.grab().save(str(OUT))
    print(f"wrote {OUT}")
    window.close()
    app.processEvents()


if __name__ == "__main__":
    main()
