"""The mixer's sample loops: each sound weighted by its ears' gains and added to the mix, a brief sound baked
at a fixed gain, and the mix as PCM.

Two kernels give the same bits: the compiled one (_mixkernel.c, built by `pip install`), which costs one call
per sound, and numpy's, used where no C compiler was found at install time (`world` says which one runs).
Both compute every gain as round(round(step * frac) + first) and every sample as round(out + round(gain *
signal)), in the order the mixer calls them, so the world's sound does not depend on which one ran (a test
renders the same blocks through both).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from core.world.sound import spatial
from core.world.sound.ramps import Ramps


class CompiledLoops(Protocol):
    """What _mixkernel.c offers (its docstrings say what each does)."""

    def weigh(self, out: np.ndarray, stride: int, a: int, b: int, signal: np.ndarray, base_left: int,
              base_right: int, gains: np.ndarray, audible: np.ndarray, row: int, ticks: int, frac: np.ndarray,
              still: bool, write: bool, /) -> None: ...

    def bake(self, baked: np.ndarray, signal: np.ndarray, base_left: int, base_right: int, gain_left: float,
             gain_right: float, scale: float, /) -> None: ...

    def add(self, out: np.ndarray, stride: int, a: int, b: int, baked: np.ndarray, offset: int, write: bool,
            /) -> None: ...

    def to_pcm(self, out: np.ndarray, stride: int, size: int, clip: bool, pcm: np.ndarray, /) -> None: ...

    def levels(self, offset: np.ndarray, flat: np.ndarray, distance: np.ndarray, cos: np.ndarray, sin: np.ndarray,
               table: np.ndarray, gain_sqrt2: float, near: float, behind_slope: float, ahead: float,
               ild_exponent: float, exponent: np.ndarray, level: np.ndarray, /) -> None: ...

    def on_segment(self, places: np.ndarray, row: int, poses: np.ndarray, ax: float, ay: float, along_x: float,
                   along_y: float, length_sq: float, /) -> None: ...

    def audibility(self, gains: np.ndarray, table: np.ndarray, still_listener: bool, audible: np.ndarray,
                   /) -> tuple[list[float], list[bool], list[bool]]: ...


def _compiled_module() -> CompiledLoops | None:
    try:
        from core.world.sound import _mixkernel
    except ImportError:  # installed without a C compiler: numpy's kernel, slower, the same samples
        return None
    return _mixkernel


COMPILED = _compiled_module()


@dataclass
class BlockGains:
    """Every spatialized sound's gains in a block: gains (sounds, ears, knots) float32 at the tick boundaries,
    and audible (sounds, ticks) bool, false for a tick too quiet to hear at both ends (its gains are 0)."""

    gains: np.ndarray
    audible: np.ndarray
    # numpy's kernel: (sounds, ears, ticks, 2), [step, first] of each tick's ramp, made once a block
    pairs: np.ndarray | None = None


Audibility = tuple[np.ndarray, list[float], list[bool], list[bool]]


class NumpyKernel:
    name = "numpy"
    levels = staticmethod(spatial.numpy_levels)  # the arithmetic of the spatial gains

    @staticmethod
    def on_segment(places: npt.NDArray[np.complex128], row: int, poses: np.ndarray,
                   segment: tuple[float, float, float, float, float]) -> None:
        """places[row] (complex) = the segment's nearest point to each listener pose (spatial.on_segment)."""
        places.real[row], places.imag[row] = spatial.on_segment(poses[:, 0], poses[:, 1], segment)

    @staticmethod
    def audibility(gains: np.ndarray, table: np.ndarray, still_listener: bool) -> Audibility:
        """Which ticks of each sound can be heard, (sounds, ticks) bool: a tick is left out where the sound is
        too quiet to hear at both of its ends (below table's QUIET), in both ears; and per sound its largest
        gain, whether it is heard at all, and whether it is still (still_listener: the listener did not move
        all block; every tick heard: so the same gains at every tick boundary. Only a shortcut: a ramp of step 0
        gives the same bits)."""
        quiet = table[:, spatial.QUIET:spatial.QUIET + 1]
        heard: np.ndarray = np.maximum(gains[:, 0], gains[:, 1]) >= quiet  # (sounds, knots)
        audible = heard[:, :-1] | heard[:, 1:]  # (sounds, ticks)
        largest: list[float] = gains.max(axis=(1, 2)).tolist()  # (sounds,): for the bound on the mix
        # heard at some tick boundary, so in some tick: its largest gain is above its threshold
        heard_at_all = [gain >= at_least for gain, at_least in zip(largest, quiet[:, 0].tolist(), strict=True)]
        still: list[bool] = (np.logical_and.reduce(audible, axis=1).tolist() if still_listener
                             else [False] * len(largest))
        return audible, largest, heard_at_all, still

    def __init__(self, samples_per_tick: int, max_ticks: int) -> None:
        self.spt = samples_per_tick
        self.ramps = Ramps(samples_per_tick, max_ticks)
        block = samples_per_tick * max_ticks
        self._ramp = np.empty(2 * block, np.float32)  # one sound's gains, sample by sample
        self._weighted = np.empty((2, block), np.float32)  # one sound weighted, before it is added

    def prepare(self, block: BlockGains) -> None:
        """Every sound's ramps at once: fewer calls than one sound's at a time."""
        gains, audible = block.gains, block.audible
        if audible.all():  # most blocks: nothing to leave out (x * 1 is x, so this is only a shortcut)
            start = gains[..., :-1]  # (sounds, ears, ticks)
            step = gains[..., 1:] - start
        else:
            start = gains[..., :-1] * audible[:, None]
            step = gains[..., 1:] * audible[:, None] - start
        block.pairs = np.stack([step, start], axis=-1)

    def weigh(self, out: np.ndarray, a: int, b: int, signal: np.ndarray, bases: tuple[int, int],
              block: BlockGains, row: int, still: bool, write: bool) -> None:
        """out[ear, i] (+)= signal[bases[ear] + i] * the ear's gain at sample i, for i in [a, b) of the block.
        out: (2, block) float32; row: the sound's in block; still: every tick's gains are the first tick's
        (their steps are 0); write: out = the product (out + 0 would give the same, but for a zero's sign,
        which int16 cannot hold)."""
        assert block.pairs is not None, "prepare(block) first"
        pairs = block.pairs[row]
        gain: np.ndarray
        if still:
            gain = pairs[:, 0, 1:]  # (ears, 1)
        else:
            k0, k1 = a // self.spt, (b - 1) // self.spt + 1
            ramp = self._ramp[:2 * (k1 - k0) * self.spt].reshape(2, -1)
            self.ramps.fill_pairs(ramp.reshape(2, k1 - k0, self.spt), pairs[:, k0:k1])
            gain = ramp[:, a - k0 * self.spt:b - k0 * self.spt]
        target = out[:, a:b]
        if bases[0] == bases[1]:  # both ears hear the same samples: both in one call
            samples = signal[bases[0] + a:bases[0] + b]
            if write:
                np.multiply(samples, gain, out=target)
            else:
                weighted = self._weighted[:, :b - a]
                np.multiply(samples, gain, out=weighted)
                np.add(target, weighted, out=target)
            return
        for ear, base in enumerate(bases):
            weighted = target[ear] if write else self._weighted[0, :b - a]
            np.multiply(signal[base + a:base + b], gain[ear], out=weighted)
            if not write:
                np.add(target[ear], weighted, out=target[ear])

    def bake(self, baked: np.ndarray, signal: np.ndarray, bases: tuple[int, int], gains: tuple[float, float],
             scale: np.float32 | None) -> None:
        """baked (2, length) = signal[bases[ear]:][:length] * (the ear's gain * scale), in float32."""
        gain = np.array(gains, np.float32)
        if scale is not None:  # its level with the ears' gains: one pass over its samples, not two
            gain *= scale
        length = baked.shape[1]
        for ear, base in enumerate(bases):
            np.multiply(signal[base:base + length], gain[ear], out=baked[ear])

    def add(self, out: np.ndarray, a: int, b: int, baked: np.ndarray, offset: int, write: bool) -> None:
        """out[:, a:b] (+)= baked[:, offset + a:offset + b]: a baked sound mixed in."""
        if write:
            out[:, a:b] = baked[:, offset + a:offset + b]
        else:
            np.add(out[:, a:b], baked[:, offset + a:offset + b], out=out[:, a:b])

    def to_pcm(self, out: np.ndarray, size: int, clip: bool) -> np.ndarray:
        """The first size samples of out (2, block) as (size, 2) int16, clipped to the 16-bit range if clip."""
        mix = out[:, :size]
        if clip:
            np.clip(mix, -32768.0, 32767.0, out=mix)  # the same as minimum then maximum, several times faster
        pcm = mix.astype(np.int16)
        interleaved = np.empty((size, 2), np.int16)  # the ring's layout; casting while transposing is slow
        interleaved[:, 0], interleaved[:, 1] = pcm
        return interleaved


class CompiledKernel:
    """The same as NumpyKernel, each call one call into _mixkernel.c."""

    name = "compiled"

    def __init__(self, samples_per_tick: int, module: CompiledLoops) -> None:
        self.frac = Ramps(samples_per_tick, 1).frac
        self._module = module

    def prepare(self, block: BlockGains) -> None:
        pass  # each sound's ramps are made as it is weighed

    def levels(self, offset: np.ndarray, flat: np.ndarray, distance: np.ndarray, cos: np.ndarray, sin: np.ndarray,
               table: np.ndarray, gain: float) -> tuple[np.ndarray, np.ndarray]:
        """spatial.numpy_levels, compiled."""
        exponent, level = np.empty(flat.shape), np.empty(flat.shape)
        self._module.levels(offset, flat, distance, cos, sin, table, gain * spatial.SQRT2, spatial.NEAR_M,
                            spatial.BEHIND_SLOPE, 1.0 - spatial.BEHIND_SLOPE, spatial.ILD_EXPONENT, exponent, level)
        return exponent, level

    def on_segment(self, places: npt.NDArray[np.complex128], row: int, poses: np.ndarray,
                   segment: tuple[float, float, float, float, float]) -> None:
        self._module.on_segment(places, row, poses, *segment)

    def audibility(self, gains: np.ndarray, table: np.ndarray, still_listener: bool) -> Audibility:
        audible = np.empty((gains.shape[0], gains.shape[2] - 1), np.bool_)
        return (audible, *self._module.audibility(gains, table, still_listener, audible))

    def weigh(self, out: np.ndarray, a: int, b: int, signal: np.ndarray, bases: tuple[int, int],
              block: BlockGains, row: int, still: bool, write: bool) -> None:
        self._module.weigh(out, out.shape[1], a, b, signal, bases[0], bases[1], block.gains, block.audible, row,
                           block.audible.shape[1], self.frac, still, write)

    def bake(self, baked: np.ndarray, signal: np.ndarray, bases: tuple[int, int], gains: tuple[float, float],
             scale: np.float32 | None) -> None:
        self._module.bake(baked, signal, bases[0], bases[1], gains[0], gains[1],
                          1.0 if scale is None else float(scale))

    def add(self, out: np.ndarray, a: int, b: int, baked: np.ndarray, offset: int, write: bool) -> None:
        self._module.add(out, out.shape[1], a, b, baked, offset, write)

    def to_pcm(self, out: np.ndarray, size: int, clip: bool) -> np.ndarray:
        interleaved = np.empty((size, 2), np.int16)
        self._module.to_pcm(out, out.shape[1], size, clip, interleaved)
        return interleaved


MixKernel = NumpyKernel | CompiledKernel


def best_kernel(samples_per_tick: int, max_ticks: int) -> MixKernel:
    if COMPILED is not None:
        return CompiledKernel(samples_per_tick, COMPILED)
    return NumpyKernel(samples_per_tick, max_ticks)
