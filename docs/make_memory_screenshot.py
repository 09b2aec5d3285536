"""Regenerate the README's Memory tab screenshot:
`QT_QPA_PLATFORM=offscreen python docs/make_memory_screenshot.py`.

A value scan narrows to the camera pitch while the camera is tilted, the finder finds the position,
a signature is made and saved to a temporary profile, and the profile is tried: its evaluator's
trajectory is drawn. Nothing is kept.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.evaluation.locate import candidates
from core.game.pad import PadState
from core.memory.readers import LinuxReader
from studio.qt_wait import spin_until
from studio.scripted import open_studio, save_and_close

OUT = Path(__file__).resolve().parent / "images" / "studio_memory.png"


def main() -> None:
    app, window = open_studio()
    session, memory = window.session, window.memory
    window.tabs.setCurrentWidget(memory)
    panel, finder = memory.scan_panel, memory.finder_panel
    sample, world, profile = session.host.latest_sample(), session.host.world, session.host.profile
    assert sample is not None and world is not None and profile is not None, "the built-in world did not connect"
    pitch = sample.camera_pitch
    panel.first_value.setText(f"{pitch:.1f}")
    panel.request_first()
    spin_until(lambda: "first scan" in panel.status.text(), 60)
    session.human_input(PadState(right_y=1.0), 0.6)
    spin_until(lambda: session.human_inputs_waiting == 0, 10)
    panel.next_op.setCurrentIndex(panel.next_op.findData("increased"))
    panel.request_next()
    spin_until(lambda: "next scan" in panel.status.text(), 60)
    finder.find_button.click()
    spin_until(lambda: memory.found is not None and finder.find_button.isEnabled(), 120)
    finder.sign_button.click()
    spin_until(lambda: memory.built is not None and finder.find_button.isEnabled(), 180)
    with tempfile.TemporaryDirectory() as folder:
        memory.save_profile(Path(folder) / "found.yaml")
        finder.try_button.click()
        spin_until(lambda: "followed the walk" in finder.status.text() or "try:" in finder.status.text(), 120)
    block = candidates(LinuxReader(world.pid), profile)[0].address
    memory.table.selectRow([address for address, _ in memory.rows].index(block + 44))  # the camera pitch
    for pad in (PadState(), PadState(right_y=-1.0), PadState(), PadState(right_y=0.6), PadState(left_y=1.0),
                PadState(right_y=-0.5), PadState()):
        session.human_input(pad, 0.4)
        spin_until(lambda: session.human_inputs_waiting == 0, 10)
        spin_until(lambda: False, 0.5)
    print(finder.status.text())
    save_and_close(app, window, OUT, settle_s=0.6)


if __name__ == "__main__":
    main()
