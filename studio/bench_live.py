"""`python main.py bench live`: the studio window, offscreen, during a recorded episode in real time.

Reports frames displayed against frames produced by the world, and how long the GUI event loop
stalls, measured with a 5 ms timer probe (a stall is the probe firing late).
"""

from __future__ import annotations

import argparse
import gc
import os
import time
from collections.abc import Callable

import numpy as np

Emit = Callable[..., None]
PROBE_MS = 5


def bench_live(args: argparse.Namespace, emit: Emit) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt, QTimer
    from PySide6.QtWidgets import QApplication

    from studio.live_controls import CLOCKS, LiveChoices
    from studio.live_session import LiveSession
    from studio.main_window import MainWindow
    from studio.qt_wait import spin_until, use_scratch_settings

    _app = QApplication.instance() or QApplication([])  # must exist while the window lives
    # The user's saved settings (task, world clock...) must neither shape the measurement nor change.
    use_scratch_settings()
    session = LiveSession(mode="realtime")
    window = MainWindow(session)
    window.live.controls.clock.setCurrentIndex(list(CLOCKS.values()).index("realtime"))
    window.setProperty("quiet", True)
    window.show()
    session.connect_world()

    spin_until(lambda: session.evaluator is not None and "Connected" in window.live.status.text(), 90)
    session.start_episode(LiveChoices("q10_market_mixed", budget=10_000))
    spin_until(lambda: False, 2.0)  # let the episode get going
    gaps: list[float] = []
    last = [time.perf_counter()]

    def probe() -> None:
        now = time.perf_counter()
        gaps.append((now - last[0]) * 1000 - PROBE_MS)
        last[0] = now

    probe_timer = QTimer()
    probe_timer.setTimerType(Qt.TimerType.PreciseTimer)
    probe_timer.timeout.connect(probe)
    produced_start = session.world.latest_frame().frame_no if session.world else 0
    shown_start = window.live.frame_view.frames_shown
    started = time.perf_counter()
    probe_timer.start(PROBE_MS)
    spin_until(lambda: False, args.live_seconds)
    probe_timer.stop()
    elapsed = time.perf_counter() - started
    produced = (session.world.latest_frame().frame_no - produced_start) / elapsed if session.world else 0.0
    displayed = (window.live.frame_view.frames_shown - shown_start) / elapsed
    stalls = np.maximum(np.asarray(gaps[1:]), 0.0)
    emit(args, "displayed_fps", displayed, "frames/s", produced, "produced_fps")
    emit(args, "ui_stall_ms_max", float(stalls.max()), "ms")
    emit(args, "ui_stall_ms_p99", float(np.percentile(stalls, 99)), "ms")
    emit(args, "steps_recorded", float(window.live.reasoning.count), "steps")
    window.close()
    # Tear down while the interpreter is whole: Qt objects left to interpreter finalization can
    # crash PySide6 (a known issue) after the figures have been printed.
    window.deleteLater()
    _app.processEvents()

    gc.collect()
