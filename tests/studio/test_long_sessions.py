"""Issue 11, point 16: a studio left running for hours stays small. The evaluator's sample log keeps what
the runner and the plot need (a model call that retries for minutes), and the live map keeps its full
path downsampled while the bright tail shows the latest samples as they came."""

from __future__ import annotations

import math
import random
import time
import tracemalloc

import numpy as np
import pytest

from core.episode.records import StepDecision, StepRecord
from core.evaluation.sample import StateSample
from core.evaluation.sample_log import KEEP_SAMPLES, SampleLog

SAMPLE_HZ = 60


def sample(index: int) -> StateSample:
    return StateSample.from_values({"x": index * 0.01, "y": -index * 0.02, "z": 0.5, "tick": index, "facing": 12.5,
                                    "camera_yaw": 30.1, "camera_pitch": -12.0, "flags": 3, "map_id": 1},
                                   time.time())


def test_the_sample_log_covers_the_longest_wait_of_the_runner_and_stays_small():
    longest_model_call_s = 5 * 60 + (1 + 2 + 4 + 8) * 1.25  # 5 attempts of 60 s, back-off with jitter
    assert longest_model_call_s * SAMPLE_HZ <= KEEP_SAMPLES
    tracemalloc.start()
    log = SampleLog()
    for index in range(2 * KEEP_SAMPLES):  # a long session: the oldest samples go
        log.append(sample(index))
    held, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(log) == 2 * KEEP_SAMPLES and log.dropped == KEEP_SAMPLES
    assert held < 8 * 2**20, f"the sample log holds {held / 2**20:.1f} MiB"


def test_the_live_map_keeps_a_long_walk_downsampled_and_the_tail_as_it_came(qtbot):
    pytest.importorskip("pytestqt")
    from widgets.trajectory_plot import _TAIL, PATH_SPACING, TrajectoryPlot

    plot = TrajectoryPlot()
    qtbot.addWidget(plot)
    rng = random.Random(7)
    x = y = heading = 0.0
    walked = 0.0
    minutes = 20
    chunk = SAMPLE_HZ // 10  # the view pulls samples every 100 ms
    for _ in range(minutes * 60 * 10):
        xs, ys = [], []
        for _ in range(chunk):
            heading += rng.uniform(-0.05, 0.05)
            speed = 0.0 if rng.random() < 0.3 else 4.0 / SAMPLE_HZ  # walks at 4 m/s, or stands
            x, y = x + math.cos(heading) * speed, y + math.sin(heading) * speed
            walked += speed
            xs.append(x)
            ys.append(y)
        plot.append_path(np.array(xs), np.array(ys))
    assert plot.points <= walked / PATH_SPACING + 1  # one point per quarter metre at most
    assert plot.points < minutes * 60 * SAMPLE_HZ / 5  # far fewer than the samples that came
    tail_x, tail_y = plot._tail.getData()
    assert len(tail_x) == _TAIL and (tail_x[-1], tail_y[-1]) == (x, y)  # the latest samples, all of them
    kept = plot._path_buffer[:plot.points]
    assert np.hypot(*np.diff(kept, axis=0).T).min() >= PATH_SPACING - 1e-9


def test_a_long_episode_adds_each_step_to_the_reasoning_list_without_measuring_the_ones_before(qtbot):
    """At 1,000 steps, measuring every entry again on each new step took 26 ms of the GUI thread per step."""
    from PySide6.QtWidgets import QStyledItemDelegate

    from widgets.reasoning_panel import ReasoningPanel

    class CountingDelegate(QStyledItemDelegate):
        measured = 0

        def sizeHint(self, option, index):  # Qt's name
            CountingDelegate.measured += 1
            return super().sizeHint(option, index)

    panel = ReasoningPanel()
    qtbot.addWidget(panel)
    panel.list.setItemDelegate(CountingDelegate(panel.list))
    panel.resize(400, 600)
    panel.show()
    steps = 400
    for step in range(1, steps + 1):
        decision = StepDecision("MoveForward", thought="a thought the model wrote\nover several lines\n\nlike this",
                                self_assessment="progressing")
        panel.add_step(StepRecord(step, "agent", 0, 15, 0.0, "MoveForward", decision=decision))
        if step % 50 == 0:
            qtbot.wait(0)  # let the list lay out now and then, as the event loop does
    qtbot.waitUntil(lambda: panel.list.verticalScrollBar().value() == panel.list.verticalScrollBar().maximum())
    assert CountingDelegate.measured < 10 * steps, f"{CountingDelegate.measured} measurements for {steps} steps"
    # Each entry is two lines whatever line breaks the model wrote; its whole reply is one click away.
    assert panel.list.item(0).text().splitlines() == [
        "   1  MoveForward  [progressing]  0.00s", "      a thought the model wrote over several lines like this"]
