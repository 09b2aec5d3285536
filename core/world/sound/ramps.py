"""Gains that move in a straight line across each tick, sample by sample: first + (last - first) * i / n.

The mixer needs one such ramp per ear of every sound that is not standing still, for every tick of a block,
and making them is a large part of its work: numpy multiplies an array by a number per row two to three
times slower than it multiplies two arrays. A matrix product does the same arithmetic in one call, three
times faster: each ramp is [step, first] @ [[i / n ...], [1 ...]], a sum of two products, the second exact
(x * 1 = x), so the result is round(round(step * i / n) + first), exactly as the two numpy calls round it.

That holds only where the BLAS library adds the two products in that order and rounds each, which every
common one does; a library that fused them into one rounding would change the last bit of some gains. So
the matrix product is used only after it has given the same bits as the two calls on test ramps of every
size a block can have (checked once per world), and the two calls are used otherwise. Lockstep needs the
same inputs to give the same samples, and a tick's samples must not depend on how ticks were grouped: both
ways compute every sample from its own tick's numbers alone.
"""

from __future__ import annotations

import numpy as np

# OpenBLAS multiplies on all its threads once rows x columns x 2 passes 65536 x GEMM_MULTITHREAD_THRESHOLD (4):
# on a busy machine of two cores a product of 384 rows of 800 then took 1-4 ms of CPU instead of 0.05-0.08 ms
# on one thread. A product is kept below this, in several if need be.
SINGLE_THREAD_PRODUCT = 200_000


class Ramps:
    def __init__(self, samples_per_tick: int, max_ticks: int) -> None:
        self.frac = (np.arange(samples_per_tick) / samples_per_tick).astype(np.float32)
        self._basis = np.vstack([self.frac, np.ones(samples_per_tick, np.float32)])  # (2, samples_per_tick)
        # rows in one product: an even number, at most those checked below
        self.rows = max(2, min(2 * max_ticks, SINGLE_THREAD_PRODUCT // (2 * samples_per_tick) // 2 * 2))
        self.by_product = self._product_is_exact()

    def fill(self, out: np.ndarray, first: np.ndarray, step: np.ndarray) -> None:
        """out (ears, ticks, samples_per_tick) float32, C-contiguous, = first + step * frac, with first and
        step (ears, ticks) float32."""
        self.fill_pairs(out, np.stack([step, first], axis=-1))

    def fill_pairs(self, out: np.ndarray, pairs: np.ndarray) -> None:
        """Like fill, from pairs (ears, ticks, 2) float32 = [step, first] per ear and tick: the mixer stacks every
        sound's pairs at once, rather than each sound's as its ramps are made."""
        if not self.by_product:
            np.multiply(pairs[..., 0, None], self.frac, out=out)
            np.add(out, pairs[..., 1, None], out=out)
            return
        assert out.flags.c_contiguous, "the product is written through a reshaped view of out"
        flat_pairs = pairs.reshape(-1, 2)  # a view where pairs is contiguous (the mixer's are, for whole blocks)
        flat = out.reshape(len(flat_pairs), -1)
        for row in range(0, len(flat_pairs), self.rows):  # the row counts are even: ticks of whole ears, or self.rows
            np.matmul(flat_pairs[row:row + self.rows], self._basis, out=flat[row:row + self.rows])

    def _product_is_exact(self) -> bool:
        """Whether the matrix product gives the same bits as the two numpy calls, for test ramps of every row
        count a product can have (a BLAS kernel may treat the rows at the edge of its tiles apart): an even
        number up to self.rows."""
        rng = np.random.default_rng(0)
        spt = len(self.frac)
        for ticks in range(1, self.rows // 2 + 1):
            scale = np.float32(10.0) ** rng.integers(-3, 5, (2, ticks)).astype(np.float32)
            first = (rng.standard_normal((2, ticks)) * scale).astype(np.float32)
            step = (rng.standard_normal((2, ticks)) * scale * np.float32(0.01)).astype(np.float32)
            expected = step[:, :, None] * self.frac + first[:, :, None]
            pairs = np.column_stack([step.reshape(-1), first.reshape(-1)])
            got = np.empty((2, ticks, spt), np.float32)
            np.matmul(pairs, self._basis, out=got.reshape(2 * ticks, spt))
            if not np.array_equal(expected, got):
                return False
        return True
