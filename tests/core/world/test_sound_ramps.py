"""The mixer's gain ramps: the matrix product it prefers gives the same bits as the plain numpy arithmetic,
so the sound does not depend on which one ran (core/world/sound/ramps.py)."""

from __future__ import annotations

import numpy as np

from core.world.sound.ramps import Ramps


def _both_ways(ramps: Ramps, first: np.ndarray, step: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ticks, spt = first.shape[1], len(ramps.frac)
    made = []
    for by_product in (True, False):
        ramps.by_product = by_product
        out = np.empty((2, ticks, spt), np.float32)
        ramps.fill(out, first, step)
        made.append(out)
    return made[0], made[1]


def test_a_ramp_goes_in_a_straight_line_from_each_tick_boundary_to_the_next():
    ramps = Ramps(800, 64)
    first = np.array([[1000.0, 2000.0], [0.0, 10.0]], np.float32)
    step = np.array([[800.0, -400.0], [0.0, 8.0]], np.float32)
    for out in _both_ways(ramps, first, step):
        assert out[0, 0, 0] == 1000.0 and out[0, 0, 400] == 1400.0 and out[0, 0, 799] == 1799.0
        assert out[0, 1, 0] == 2000.0 and out[0, 1, 200] == 1900.0
        assert not out[1, 0].any() and out[1, 1, 100] == 11.0


def test_the_matrix_product_and_the_plain_arithmetic_give_the_same_bits():
    ramps = Ramps(800, 64)
    assert ramps.by_product  # numpy's own BLAS adds the two products as the plain arithmetic does
    rng = np.random.default_rng(7)
    for ticks in (1, 2, 7, 15, 16, 33, 64):
        first = (rng.standard_normal((2, ticks)) * 20000).astype(np.float32)
        step = (rng.standard_normal((2, ticks)) * 300).astype(np.float32)
        by_product, plain = _both_ways(ramps, first, step)
        assert np.array_equal(by_product, plain)
