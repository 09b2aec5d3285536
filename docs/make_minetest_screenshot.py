"""Regenerate the README's screenshot of the Live view on Minetest (a real X server shows it best):

    Xvfb :91 -screen 0 1920x1080x24 & DISPLAY=:91 QT_QPA_PLATFORM=xcb python docs/make_minetest_screenshot.py

The studio opens, Game > Minetest is chosen (Minetest starts in its own Xvfb, as in CI), and the random
agent plays mt02 with the previous frame and side views made by turning the camera.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from studio.live_controls import LiveChoices
from studio.qt_wait import spin_until
from studio.scripted import open_studio, save_and_close

OUT = Path(__file__).resolve().parent / "images" / "studio_live_minetest.png"


def main() -> None:
    app, window = open_studio(connect=False)
    studio_display = os.environ.pop("DISPLAY", None)  # Minetest gets its own Xvfb, so it never grabs this screen
    try:
        window.choose_backend("minetest")
        live = window.live
        spin_until(lambda: "Connected" in live.status.full_text(), 120)
    finally:
        if studio_display is not None:
            os.environ["DISPLAY"] = studio_display
    task = "mt02_pine_grove_navigation"
    live.controls.task.setCurrentText(task)
    live.controls.side_views.setChecked(True)
    live.controls.previous_frame.setChecked(True)
    window.session.start_episode(LiveChoices(task, budget=40, previous_frame=True, side_views=True))
    spin_until(lambda: live.reasoning.count >= 9, 300)
    window.session.pause()
    spin_until(lambda: not window.session.busy or live.reasoning.count >= 10, 60)
    save_and_close(app, window, OUT, settle_s=2.0)


if __name__ == "__main__":
    main()
