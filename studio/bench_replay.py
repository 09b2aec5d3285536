"""`python main.py bench replay`: the Replay view, offscreen, on a 10,000-step recording.

Reports random-seek and ←/→-step latency (request to image on screen, through the latest-wins
loader) against the bare reader's time for the same image read in the same run, and playback at 4×.
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

Emit = Callable[..., None]
STEPS = 10_000


def _real_frames(count: int = 24) -> list[np.ndarray]:
    from core.game.builtin import BuiltinWorld
    from core.game.pad import PadState

    frames = []
    with BuiltinWorld.launch(renderer="software") as world:
        world.reset("south_gate")
        for i in range(count):
            world.hold(PadState(left_y=1.0, right_x=0.4 if i % 2 else -0.4), 0.5)
            frames.append(world.latest_frame().pixels)
    return frames


def _bare_read_ms(path: Path, indices: list[int]) -> float:
    from core.recording.reader import EpisodeReader

    times = []
    with EpisodeReader(path) as episode:
        for index in indices:
            started = time.perf_counter()
            episode.image("current", index)
            times.append(time.perf_counter() - started)
    return float(np.percentile(times, 95) * 1000)


def bench_replay(args: argparse.Namespace, emit: Emit) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from core.episode.synthetic import write_long_episode
    from studio.qt_wait import spin_until, use_scratch_settings
    from studio.replay.playback import PlaybackPlan
    from studio.replay.replay_view import SPEEDS, ReplayView

    app = QApplication.instance() or QApplication([])
    use_scratch_settings()
    with tempfile.TemporaryDirectory(dir=args.tmp) as folder:
        path = write_long_episode(Path(folder) / "long.h5", STEPS, _real_frames())
        view = ReplayView()
        view.resize(1400, 860)
        view.show()
        view.open_episode(str(path))
        spin_until(lambda: view.episode is not None and view.shown_index == 0, 60)
        rng = random.Random(7)
        seeks = [rng.randrange(STEPS) for _ in range(150)]

        shown_at: dict[int, float] = {}
        view.sig_image_shown.connect(lambda index: shown_at.__setitem__(index, time.perf_counter()))

        def timed(index: int) -> float:
            """From the seek to the image painted in the frame view (sig_image_shown follows its repaint)."""
            shown_at.pop(index, None)
            started = time.perf_counter()
            view.seek(index)
            spin_until(lambda: index in shown_at, 5, check_ms=1)
            return (shown_at[index] - started) * 1000

        seek_ms = [timed(i) for i in seeks]
        view.seek(5000)
        spin_until(lambda: view.shown_index == 5000, 5)
        step_ms = []
        for index in range(5001, 5151):
            spin_until(lambda: False, 0.03)  # a person's key repeat: the loader prefetches meanwhile
            step_ms.append(timed(index))
        bare = _bare_read_ms(path, seeks)
        emit(args, "seek_ms_p95", float(np.percentile(seek_ms, 95)), "ms", bare, "bare_read_ms_p95")
        emit(args, "step_ms_p95", float(np.percentile(step_ms, 95)), "ms", bare, "bare_read_ms_p95")
        view.speed.setCurrentIndex(SPEEDS.index(4.0))
        view.seek(0)
        shown_before = view.frames_displayed
        started = time.perf_counter()
        view.toggle_play()
        spin_until(lambda: False, args.live_seconds / 3)
        view.toggle_play()
        elapsed = time.perf_counter() - started
        assert view.episode is not None  # opened above
        plan = PlaybackPlan.for_episode(view.episode, 0)  # the clock plays the episode's ticks at 4x game rate
        due = int(np.searchsorted(plan.starts, elapsed * 4.0, side="right")) / elapsed
        emit(args, "playback_fps", (view.frames_displayed - shown_before) / elapsed, "steps/s", due, "due_steps_per_s")
        view.close()
        view.shut_down()
        view.deleteLater()
        app.processEvents()
