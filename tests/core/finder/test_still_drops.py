"""Still steps: a landing is forgiven once (a character still landing as a stand begins changes the height of every
true copy of the position, and nothing else); any other change drops the triple, and what was dropped is kept for
diagnosis: when the finder ranks no copy of the position, the drops name the step that lost them."""

from __future__ import annotations

import os

import numpy as np

from core.finder.position import PositionResult
from core.finder.track import StillDrop, Tracker
from core.memory.readers import LinuxReader


def test_a_landing_is_forgiven_once_and_other_changes_in_a_still_step_are_not():
    # Three triples in this process's memory: a position, a value that never walks, and another position.
    triples = np.array([[-1920.0, 462.5, 1280.0], [7.0, 8.0, 9.0], [100.0, 5.0, 100.0]], dtype=np.float32)
    base = triples.ctypes.data
    addresses = np.array([base, base + 12, base + 24], dtype=np.uint64)
    reader = LinuxReader(os.getpid())
    try:
        tracker = Tracker(reader, addresses, triples.copy())
        triples[0, 0] += 24.0   # a walk moves both positions, and not the other value
        triples[2, 0] += 24.0
        assert tracker.moved(1, "forward (round 1)", None) == 3
        triples[0, 1] = 461.0   # the first position's height settles while the character stands: forgiven once
        triples[1, 1] = 8.5     # the value that never walked changes: dropped
        triples[2, 0] += 3.0    # the second position's ground coordinates change: dropped (a position stands)
        triples[2, 2] += 3.0
        assert tracker.still("stand (round 1)") == 1
        assert tracker.addresses.tolist() == [base]
        assert tracker.still("turn (round 2)") == 1  # still again
        triples[0, 0] += 24.0
        assert tracker.moved(2, "forward (round 2)", None) == 1
        triples[0, 1] = 460.0   # and its height changes again in another still step: not a position after all
        assert tracker.still("stand (round 2)") == 0
    finally:
        reader.close()
    assert [(drop.step, drop.addresses.tolist()) for drop in tracker.drops] == [
        ("stand (round 1)", [base + 12, base + 24]), ("stand (round 2)", [base])]
    last = tracker.drops[-1]
    assert last.before.tolist() == [[-1872.0, 461.0, 1280.0]] and last.after.tolist() == [[-1872.0, 460.0, 1280.0]]


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
