"""A clip's soundtrack from the steps' recorded sounds: any tick range, across steps and gaps, and fitted to a
picture's time on screen."""

from __future__ import annotations

import numpy as np

from core.export.clip_audio import StepSound, TickSound, fit

PER_TICK = 800


def _step(first: int, last: int) -> StepSound:
    """A step's sound whose every frame holds its tick number, so a test sees which tick each frame came from."""
    ticks = np.repeat(np.arange(first, last + 1, dtype=np.int16), PER_TICK)
    return StepSound(np.stack([ticks, -ticks], axis=1), first, last)


def test_a_tick_range_reads_across_steps_and_is_silent_where_no_step_has_sound():
    sound = TickSound([_step(16, 30), _step(1, 15), _step(41, 45)], channels=2)  # ticks 31-40: never recorded
    pcm = sound.ticks(10, 42)
    assert pcm.shape == (33 * PER_TICK, 2) and pcm.dtype == np.int16
    heard = pcm[::PER_TICK, 0].tolist()
    assert heard == [*range(10, 31), *[0] * 10, 41, 42]
    assert (pcm[:, 1] == -pcm[:, 0]).all()  # channels kept apart
    assert len(sound.ticks(5, 4)) == 0


def test_fit_keeps_the_samples_when_the_lengths_agree_and_resamples_otherwise():
    ramp = np.stack([np.arange(1000, dtype=np.int16)] * 2, axis=1)
    assert np.array_equal(fit(ramp, 1000), ramp)
    assert np.array_equal(fit(ramp, 999), ramp[:999]) and np.array_equal(fit(ramp, 1001)[:1000], ramp)
    half = fit(ramp, 500)  # twice as fast: every other sample, start and end kept
    assert len(half) == 500 and half[0, 0] == 0 and half[-1, 0] == 999 and (np.diff(half[:, 0]) > 0).all()
    assert len(fit(ramp, 0)) == 0
