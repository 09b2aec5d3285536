"""Regenerate the README's task-authoring screenshot:
`QT_QPA_PLATFORM=offscreen python docs/make_authoring_screenshot.py`.

The character is driven as a user would between episodes; the panel captures a start, waypoints and
a goal from the evaluator, then tries the task. Nothing is saved.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget

from core.game.pad import PadState
from studio.qt_wait import spin_until
from studio.scripted import open_studio, save_and_close

OUT = Path(__file__).resolve().parent / "images" / "studio_authoring.png"
TEXTS = {"visual_guided": "Walk south from the fountain, then east along the cobbled lane to the benches.",
         "step_guided": "1. Go south past the fountain. 2. Turn east. 3. Stop by the benches.",
         "goal_only": "Go to the benches on the lane."}
DRIVE = [("start", None), ("waypoint", PadState(left_y=1.0)), ("waypoint", PadState(left_x=-1.0)),
         ("waypoint", PadState(left_y=1.0, left_x=-0.6)), ("goal", None)]  # capture, after a second's walk


def main() -> None:
    app, window = open_studio()
    session = window.session
    live, panel = window.live, window.live.authoring
    dock = live.findChild(QDockWidget, "dock-Author task")
    dock.raise_()
    live.resizeDocks([dock], [440], Qt.Orientation.Horizontal)
    panel.form.id.setText("q11_lane_walk")
    panel.form.title.setText("Walk to the benches on the lane")
    panel.form.quest.setText("q11_lane")
    panel.form.budget.setValue(40)
    for granularity, text in TEXTS.items():
        panel.form.instructions[granularity].setPlainText(text)
    panel.form.radius.setValue(2.5)
    for purpose, pad in DRIVE:
        if pad is not None:
            session.human_input(pad, 1.0)
        panel.capture(purpose)  # queued behind the walk, so it records where the walk ends
    spin_until(lambda: panel.draft.goal is not None, 60)
    panel.try_it()
    spin_until(lambda: panel.bar.try_result.text().startswith(("Solved", "Not solved")), 120)
    spin_until(lambda: False, 0.8)
    xs, ys = zip(*(step.goto for step in panel.draft.route), strict=True)
    live.trajectory.setRange(xRange=(min(xs) - 14, max(xs) + 14), yRange=(min(ys) - 14, max(ys) + 14))
    print(panel.bar.try_result.text())
    save_and_close(app, window, OUT, settle_s=0.3)


if __name__ == "__main__":
    main()
