"""What a still step dropped, kept for diagnosis: when the finder ranks no copy of the position, the drops name the
step that lost them (a height still settling while the character stood drops every copy holding it)."""

from __future__ import annotations

import os

import numpy as np

from core.finder.position import PositionResult
from core.finder.track import StillDrop, Tracker
from core.memory.readers import LinuxReader


def test_a_still_step_records_the_triples_it_dropped_with_their_values_before_and_after():
    triples = np.array([[-1920.0, 462.5, 1280.0], [7.0, 8.0, 9.0]], dtype=np.float32)  # lives in this process
    base = triples.ctypes.data
    addresses = np.array([base, base + 12], dtype=np.uint64)
    reader = LinuxReader(os.getpid())
    try:
        tracker = Tracker(reader, addresses, triples.copy())
        triples[0, 1] = 461.0   # the height settles while the character stands
        assert tracker.still("stand (round 2)") == 1
    finally:
        reader.close()
    assert tracker.addresses.tolist() == [base + 12]
    [drop] = tracker.drops
    assert drop.step == "stand (round 2)" and drop.addresses.tolist() == [base]
    assert drop.before.tolist() == [[-1920.0, 462.5, 1280.0]] and drop.after.tolist() == [[-1920.0, 461.0, 1280.0]]


def test_the_result_names_the_steps_that_dropped_triples_holding_about_a_position():
    drops = [StillDrop("turn (round 1)", np.array([0x1000], np.uint64), np.array([[3e38, 5, 5]], np.float32),
                       np.array([[3.3e38, 5, 5]], np.float32)),   # nowhere near, and too large to round
             StillDrop("stand (round 2)", np.array([0x2000, 0x3000], np.uint64),
                       np.array([[-1920, 462.5, 1280], [0, 10, 0]], np.float32),
                       np.array([[-1920, 461, 1280], [0, 11, 0]], np.float32))]
    result = PositionResult([], 1.0, [], 0, drops)
    assert result.dropped_near((-1918.0, 460.0, 1283.0), 50.0) == [
        "stand (round 2): 1 dropped, e.g. 0x2000 (-1920, 462.5, 1280) -> (-1920, 461, 1280)"]
    assert result.dropped_near((100.0, 100.0, 100.0), 50.0) == []
