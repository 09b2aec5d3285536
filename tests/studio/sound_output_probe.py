"""Run by test_studio_sound_output.py in a process of its own, whose PULSE_SERVER is a private sound server: the
studio's Live view on the built-in world in real time, walking, for `seconds`; then the world's own sound over
that time, read from its audio ring, and the speaker's figures, written to `out` (ring.npy, speaker.json).

A process of its own because QtMultimedia connects to the sound server once per process, when it is first
used: the other tests' processes have none."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np


def main(out: Path, seconds: float, screenshot: Path | None) -> None:
    from PySide6.QtWidgets import QApplication

    from core.game.pad import PadState
    from studio.game_host import GameHost
    from studio.live_controls import CLOCKS
    from studio.live_session import LiveSession
    from studio.main_window import MainWindow
    from studio.qt_wait import spin_until, use_scratch_settings

    app = QApplication.instance() or QApplication([])
    use_scratch_settings()
    session = LiveSession(GameHost(mode="realtime"))
    window = MainWindow(session)
    window.live.controls.clock.setCurrentIndex(list(CLOCKS.values()).index("realtime"))
    window.setProperty("quiet", True)
    window.resize(1500, 940)
    window.show()
    session.host.connect()
    if not spin_until(lambda: session.host.evaluator is not None and "Connected" in window.live.status.full_text(),
                      90):
        raise SystemExit("the world did not connect")
    live = window.live
    started = time.monotonic()
    tick_start = session.host.world.latest_frame().tick if session.host.world else 0
    while time.monotonic() - started < seconds:  # walk forward, turning now and then: footsteps over the ambience
        session.host.hold(PadState(left_y=1.0, right_x=0.3 if int(time.monotonic() - started) % 3 == 2 else 0.0),
                          0.25)
        spin_until(lambda: not session.host.driving, 5)
    if screenshot is not None:
        spin_until(lambda: False, 0.3)
        window.grab().save(str(screenshot))
    game = session.host.heard_game()
    held = game.audio_held() if game is not None else None
    assert game is not None and held is not None, "the world gave no sound"
    np.save(out / "ring.npy", game.audio_ticks(max(held.first, tick_start), held.last).samples)
    speaker = live.speaker
    (out / "speaker.json").write_text(json.dumps({
        "problem": speaker.problem, "played_frames": speaker.played_frames, "dropped_frames": speaker.dropped_frames,
        "latencies_ms": list(speaker.latencies_ms), "columns_shown": live.sound.columns_shown,
        "status": live.sound_status.text() if live.sound_status.isVisible() else ""}))
    window.close()
    window.deleteLater()
    app.processEvents()


if __name__ == "__main__":
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    main(Path(sys.argv[1]), float(sys.argv[2]), Path(sys.argv[3]) if len(sys.argv) > 3 else None)
