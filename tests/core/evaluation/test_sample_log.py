"""The evaluator client's sample log keeps absolute indices while dropping the oldest samples."""

from __future__ import annotations

import pytest

from core.evaluation.sample import StateSample
from core.evaluation.sample_log import SampleLog


def sample(tick: int) -> StateSample:
    return StateSample(time=float(tick), tick=tick, map_id=1, x=float(tick), y=0.0, z=0.0, facing=0.0,
                       camera_yaw=0.0, camera_pitch=0.0, flags=0, dialogue_active=False)


def test_a_cursor_reads_exactly_the_new_samples_even_after_old_ones_are_dropped():
    log = SampleLog(keep=100)
    cursor = 0
    seen = []
    for tick in range(1, 1001):
        log.append(sample(tick))
        if tick % 7 == 0:
            fresh = log[cursor:]
            cursor = len(log)
            seen += [s.tick for s in fresh]
    seen += [s.tick for s in log[cursor:]]
    assert seen == list(range(1, 1001))
    assert len(log) == 1000 and log.dropped == 900 and log[-1].tick == 1000 and log[900].tick == 901
    with pytest.raises(IndexError):
        log[5]
    assert [s.tick for s in log[0:903]] == [901, 902, 903]  # only what is still kept


def test_since_never_loses_or_repeats_a_sample_and_reports_what_was_dropped():
    log = SampleLog(keep=10)
    for tick in range(1, 21):
        log.append(sample(tick))
    fresh, cursor, lost = log.since(0)  # a reader that fell 20 samples behind a log keeping 10
    assert [s.tick for s in fresh] == list(range(11, 21)) and cursor == 20 and lost == 10
    for tick in range(21, 24):
        log.append(sample(tick))
    fresh, cursor, lost = log.since(cursor)
    assert [s.tick for s in fresh] == [21, 22, 23] and cursor == 23 and lost == 0
