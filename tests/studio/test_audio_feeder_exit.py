"""A studio that exits while its speakers still play (its X server died, so no window was closed) ends with its
own exit status, not a crash: PySide deletes every Qt object Python owns at exit, and a sound feeder's thread
still delivering its timer's events then segfaulted in QApplicationPrivate::notify_helper, every time."""

from __future__ import annotations

import os
import subprocess
import sys

from core.paths import PROJECT_ROOT

PLAYING_AT_EXIT = """
import sys
import numpy as np
from PySide6.QtWidgets import QApplication
from studio.audio_feeder import AudioFeeder, ClipSource
app = QApplication(sys.argv)
speakers = [AudioFeeder(f"speaker-{n}", with_output=False) for n in range(4)]
for speaker in speakers:
    speaker.start()
    speaker.set_source(ClipSource(48000, np.zeros((48000, 2), np.int16)))
sys.exit(3)
"""


def test_a_process_that_exits_with_its_speakers_playing_exits_with_its_own_status():
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    ended = subprocess.run([sys.executable, "-c", PLAYING_AT_EXIT], cwd=PROJECT_ROOT, env=env, capture_output=True,
                           text=True, timeout=60)
    assert ended.returncode == 3, ended.stderr[-2000:]
    assert "Traceback" not in ended.stderr and "Fatal Python error" not in ended.stderr, ended.stderr[-2000:]
