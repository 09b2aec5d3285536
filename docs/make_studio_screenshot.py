"""Regenerate the README's live-window screenshot: `QT_QPA_PLATFORM=offscreen python docs/make_studio_screenshot.py`."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from studio.live_controls import LiveChoices
from studio.qt_wait import spin_until
from studio.scripted import open_studio, save_and_close

OUT = Path(__file__).resolve().parent / "images" / "studio_live.png"


def main() -> None:
    app, window = open_studio()
    session = window.session
    window.live.controls.task.setCurrentText("q08_site_navigation")
    window.live.controls.granularity.setCurrentText("Goal-only")  # as the episode below
    window.live.controls.side_views.setChecked(True)
    window.live.controls.previous_frame.setChecked(True)
    session.start_episode(LiveChoices("q08_site_navigation", intervention="physical", budget=60,
                                      previous_frame=True, side_views=True))
    spin_until(lambda: window.live.reasoning.count >= 30, 120)
    session.pause()
    spin_until(lambda: session.runner is not None and session.runner.waiting, 30)  # the status bar says Paused
    save_and_close(app, window, OUT)


if __name__ == "__main__":
    main()
