"""The mixer's two kernels, compiled and numpy's, give the same samples bit for bit, so a recording does not
depend on whether the install found a C compiler (core/world/sound/kernel.py); and the compiled one refuses
arrays that do not fit instead of reading past them."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from core.game.pad import PadState
from core.world.sound import spatial
from core.world.sound.kernel import COMPILED, BlockGains, CompiledKernel, NumpyKernel
from core.world.sound.mixer import MAX_BLOCK_TICKS
from tests.core.world.sound_rig import sound_rig

SPT = 800

if COMPILED is None and os.environ.get("POKEGYM_REQUIRE_COMPILED_MIXER") == "1":
    pytest.fail("the compiled mixer kernel is missing: reinstall with a C compiler and Python's headers "
                "(Debian: gcc python3-dev), pip install -e .", pytrace=False)
needs_compiled = pytest.mark.skipif(COMPILED is None, reason="installed without a C compiler: numpy's kernel only")


def _kernels() -> tuple[NumpyKernel, CompiledKernel]:
    assert COMPILED is not None
    return NumpyKernel(SPT, MAX_BLOCK_TICKS), CompiledKernel(SPT, COMPILED)


def _block(rng: np.random.Generator, sounds: int, ticks: int, quiet_ticks: bool) -> BlockGains:
    gains = (rng.random((sounds, 2, ticks + 1)) * rng.choice([10.0, 3000.0, 40000.0], (sounds, 1, 1)))
    audible = rng.random((sounds, ticks)) > (0.3 if quiet_ticks else -1.0)
    return BlockGains(gains.astype(np.float32), audible)


@needs_compiled
@pytest.mark.parametrize("seed", range(6))
def test_both_kernels_weigh_and_sum_sounds_to_the_same_bits(seed):
    """Beds over the whole block and voices over part of it, each ear delayed differently, moving and still,
    some ticks too quiet to hear, the first sound written and the others added."""
    rng = np.random.default_rng(seed)
    ticks = int(rng.integers(1, MAX_BLOCK_TICKS + 1))
    size = ticks * SPT
    block = _block(rng, 5, ticks, quiet_ticks=seed % 2 == 1)
    signal = rng.standard_normal(size + 3 * SPT).astype(np.float32)
    a = int(rng.integers(0, size))  # a voice's span within the block
    b = int(rng.integers(a + 1, size + 1))
    mixes = []
    for kernel in _kernels():
        kernel.prepare(block)
        out = np.full((2, MAX_BLOCK_TICKS * SPT), np.nan, np.float32)  # what is not written stays NaN
        kernel.weigh(out, 0, size, signal, (37, 37), block, 0, False, True)
        kernel.weigh(out, 0, size, signal, (SPT, SPT), block, 1, False, False)
        if block.audible[2].all():
            # still: the listener did not move, so every tick's gains are the first's
            still = BlockGains(np.repeat(block.gains[:, :, :1], ticks + 1, axis=2), block.audible)
            kernel.prepare(still)
            kernel.weigh(out, 0, size, signal, (5, 5), still, 2, True, False)
            kernel.prepare(block)
        kernel.weigh(out, a, b, signal, (100, 123), block, 3, False, False)  # a voice starting within the block
        kernel.weigh(out, a, b, signal, (2 * SPT, 2 * SPT - 7), block, 4, False, False)
        mixes.append(out)
    assert np.isfinite(mixes[0][:, :size]).all()
    assert np.isnan(mixes[0][:, size:]).all() and np.isnan(mixes[1][:, size:]).all()
    assert np.array_equal(mixes[0][:, :size], mixes[1][:, :size])


@needs_compiled
def test_both_kernels_bake_and_turn_the_mix_into_the_same_pcm():
    rng = np.random.default_rng(3)
    signal = rng.standard_normal(5000).astype(np.float32)
    baked = []
    for kernel in _kernels():
        for scale in (np.float32(0.73), None):
            out = np.empty((2, 4000), np.float32)
            kernel.bake(out, signal, (24, 17), (float(np.float32(1234.5678)), float(np.float32(0.001))), scale)
            baked.append(out)
    assert np.array_equal(baked[0], baked[2]) and np.array_equal(baked[1], baked[3])
    assert not np.array_equal(baked[0], baked[1])  # the scale was applied
    mixes = []
    for kernel in _kernels():  # baked sounds mixed in: the first written, the next added from its offset
        out = np.full((2, MAX_BLOCK_TICKS * SPT), np.nan, np.float32)
        kernel.add(out, 0, 3000, baked[0], 500, True)
        kernel.add(out, 1000, 3000, baked[1], -900, False)
        mixes.append(out)
    assert np.array_equal(mixes[0][:, :3000], mixes[1][:, :3000]) and np.isnan(mixes[1][:, 3000:]).all()
    assert np.array_equal(mixes[1][:, :1000], baked[0][:, 500:1500])
    mix = (rng.standard_normal((2, MAX_BLOCK_TICKS * SPT)) * 30000).astype(np.float32)  # some past the range
    for clip in (True, False):
        size = 15 * SPT
        source = mix if clip else np.clip(mix, -32768, 32767)
        pcm = [kernel.to_pcm(source.copy(), size, clip) for kernel in _kernels()]
        assert pcm[0].shape == (size, 2) and pcm[0].dtype == np.int16
        assert np.array_equal(pcm[0], pcm[1])
    assert pcm[0].max() == 32767 and pcm[0].min() == -32768


@needs_compiled
@pytest.mark.parametrize("seed", range(4))
def test_both_kernels_place_sounds_and_find_them_audible_alike(seed):
    """The spatial gains (sources near, far, behind, beside, faded out), lines' nearest points (clamped at both
    ends), and which ticks are heard, for random listeners walking and turning."""
    rng = np.random.default_rng(seed)
    sounds, knots = int(rng.integers(1, 9)), int(rng.integers(2, 66))
    poses = np.column_stack([np.cumsum(rng.normal(0, 0.2, (knots, 2)), axis=0) + rng.uniform(-50, 50, 2),
                             np.full(knots, 1.6), rng.uniform(-720, 720) + np.cumsum(rng.normal(0, 9, knots))])
    table = np.column_stack([rng.uniform(1, 20, sounds), rng.uniform(0, 5, sounds),
                             rng.choice([1e-4, 0.5, 50.0, 3000.0], sounds), rng.uniform(10, 160, sounds)])
    segment = (float(rng.uniform(-40, 40)), float(rng.uniform(-40, 40)), float(rng.uniform(-30, 30)),
               float(rng.uniform(-30, 30)), 0.0)
    segment = (*segment[:4], segment[2] ** 2 + segment[3] ** 2)
    points = (rng.uniform(-80, 80, (sounds, 1)) + 1j * rng.uniform(-80, 80, (sounds, 1))).repeat(knots, axis=1)
    made = []
    for kernel in _kernels():
        places = points.copy()
        kernel.on_segment(places, 0, poses, segment)  # the first sound is a line's nearest point
        gains = spatial.ears(places, table, poses, 29000.0, kernel.levels)
        audible, largest, heard_at_all, still = kernel.audibility(gains, table, seed % 2 == 0)
        made.append((places, gains, audible, largest, heard_at_all, still))
    assert not np.array_equal(made[0][0][0], points[0])
    for one, other in zip(made[0], made[1], strict=True):
        assert np.array_equal(np.asarray(one), np.asarray(other))
    assert made[0][1].dtype == np.float32 and made[0][2].shape == (sounds, knots - 1)


@needs_compiled
def test_the_town_sounds_the_same_through_either_kernel(tmp_path: Path):
    """The whole mix of a walk with footsteps, a bump, a turn, the ambience and the bell's strokes."""
    script = [(PadState(), 570), (PadState(left_y=1.0), 40), (PadState(left_y=1.0, right_x=0.6), 40),
              (PadState(left_x=1.0), 30), (PadState(right_x=-1.0), 20), (PadState(), 30)]
    heard = []
    for kernel in _kernels():
        (tmp_path / kernel.name).mkdir()
        rig = sound_rig(tmp_path / kernel.name)
        rig.engine.mixer.kernel = kernel
        rig.start(-5, -56, 90)
        heard.append(rig.play(script))
        rig.close()
    assert np.abs(heard[0]).max() > 1000
    assert np.array_equal(heard[0], heard[1])


@needs_compiled
def test_the_compiled_kernel_refuses_spans_that_do_not_fit():
    _, kernel = _kernels()
    rng = np.random.default_rng(0)
    block = _block(rng, 2, 3, quiet_ticks=False)
    out = np.zeros((2, 3 * SPT), np.float32)
    signal = np.ones(SPT, np.float32)
    with pytest.raises(ValueError, match="past the sound's samples"):
        kernel.weigh(out, 0, 3 * SPT, signal, (0, 0), block, 0, False, True)
    with pytest.raises(ValueError, match="does not fit"):
        kernel.weigh(out, 0, 3 * SPT, np.ones(4 * SPT, np.float32), (0, 0), block, 2, False, True)  # no row 2
    with pytest.raises(TypeError, match="float32"):
        kernel.weigh(out, 0, SPT, signal.astype(np.float64), (0, 0), block, 0, False, True)
    with pytest.raises(ValueError, match="baked sound"):
        kernel.add(out, 0, SPT, np.zeros((2, SPT), np.float32), 1, False)
    with pytest.raises(ValueError, match="shorter"):
        kernel.bake(np.empty((2, SPT), np.float32), signal, (1, 0), (1.0, 1.0), None)
