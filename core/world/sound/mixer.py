"""Mixes every audible sound into stereo int16 PCM for a run of ticks.

The result does not depend on how the ticks are grouped: a tick's samples are a pure function of the
listener poses at its start and end, the events so far, and the sample index. Gains move in a straight line
across each tick (no zipper noise when the camera turns, no clicks at tick boundaries), loops are read at
(sample index mod length), and sounds are summed in a fixed order. So a lockstep hold of 15 ticks sounds
bit for bit like 15 holds of one tick, or like real time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import chain

import numpy as np

from core.world.content import WorldSpec
from core.world.sound import spatial
from core.world.sound.banks import VARIANTS, Banks, stable_code
from core.world.sound.events import Bump, Footstep, Hush, Listener, SoundEvent, Speech, TickSound
from core.world.sound.kernel import BlockGains, MixKernel, best_kernel
from core.world.sound.voice import babble
from core.world.sound_spec import AmbientSource

PAD = 24  # zeros around every one-shot: more than the largest interaural delay in samples
MAX_BLOCK_TICKS = 64
AUDIBLE_REFERENCES = 8.0  # a source fades out completely at this many times its reference distance
SILENT = 4.0  # a sound quieter than this (in steps of the 16-bit output, -78 dB full scale) is left out
# A block whose sounds' peaks times their largest gains add up to less than the 16-bit range over this margin
# cannot clip, so clipping it is skipped (the margin covers float32 rounding in the ramps and sums, ~1e-6).
CLIP_MARGIN = 1.001
FADE_S = 0.01  # a voice cut short fades over this long
NEAR_REFERENCE_M = 2.0  # footsteps, bumps, cues: at full level next to the character


@dataclass
class Emitter:
    """A one-shot sound: an event's, or a stroke of the bell."""

    signal: np.ndarray  # float32, with PAD zeros before and after
    start: int  # the sample index at which signal[PAD] plays
    place: tuple[float, float, float] | None  # None: inside the head (the dialogue box's cues)
    reference_m: float = NEAR_REFERENCE_M
    speech: bool = False
    loudness: float = 1.0  # its level, to tell when it is too far to hear
    peak: float = 1.0  # its largest sample's size or more: with the gains, it bounds what it adds to the mix
    # Whole-sample delays of the left and right ear, fixed when it starts: the time difference says where
    # it began; while it plays, the level difference follows the camera.
    delays: tuple[int, int] | None = None
    # A brief sound of the character's own (a footfall, a bump, a cue) keeps the ears' gains it started with:
    # over its fraction of a second they hardly change, and a fixed gain costs far less to mix.
    brief: bool = False
    baked: np.ndarray | None = None  # (2, samples): a brief sound as each ear hears it, once it has started
    baked_peak: float = 0.0  # the largest sample of baked, or more
    # A brief sound's level, folded into the ears' gains when it is baked: its signal (a bank's, shared) is
    # never copied to scale it.
    scale: np.float32 | None = None

    @property
    def end(self) -> int:
        return self.start + len(self.signal) - 2 * PAD


@dataclass
class Bed:
    """An ambient loop heard from a shape, placed by level (its direction and distance) alone."""

    loop: np.ndarray  # the loop, with a block's worth of its start repeated after its end
    length: int
    shape: spatial.Shape
    reference_m: float
    loudness: float  # its peak


@dataclass
class Bell:
    stroke: np.ndarray  # padded like an emitter's signal
    peak: float
    place: tuple[float, float, float]
    reference_m: float
    period: int  # samples
    interval: int
    strikes: int


def _peak(signal: np.ndarray) -> float:
    return float(np.abs(signal).max()) if len(signal) else 0.0


def _quiet(loudness: float) -> float:
    """The gain below which a sound of this peak level adds less than SILENT to the mix."""
    return SILENT / loudness if loudness > 0.0 else math.inf


def _padded(signal: np.ndarray) -> np.ndarray:
    return np.concatenate([np.zeros(PAD, np.float32), signal.astype(np.float32), np.zeros(PAD, np.float32)])


class Mixer:
    def __init__(self, spec: WorldSpec, banks: Banks, samples_per_tick: int, ground_z: dict[str, float]) -> None:
        self.banks = banks
        self.seed = spec.sound.seed
        self.rate = spec.sound.rate
        self.spt = samples_per_tick
        self.master = spec.sound.gain * 32767.0  # gains include it: the mix is in steps of the 16-bit output
        self.kernel: MixKernel = best_kernel(samples_per_tick, MAX_BLOCK_TICKS)
        self.footsteps = {k: [_padded(s) for s in v] for k, v in banks.footsteps.items()}
        self.bumps = {k: [_padded(s) for s in v] for k, v in banks.bumps.items()}
        self.cues = {k: _padded(v) for k, v in banks.cues.items()}
        # each one-shot's largest sample, to bound a block's mix without looking at its samples
        self.footstep_peaks = {k: [_peak(s) for s in v] for k, v in banks.footsteps.items()}
        self.bump_peaks = {k: [_peak(s) for s in v] for k, v in banks.bumps.items()}
        self.cue_peaks = {k: _peak(v) for k, v in banks.cues.items()}
        self.voice_peak = max(float(np.abs(s).max()) for v in banks.voices.values() for s in v) if banks.voices else 1.0
        self.beds: list[Bed] = []
        self.bells: list[Bell] = []
        block = MAX_BLOCK_TICKS * samples_per_tick
        for source in spec.sound.sources:
            shape = spatial.shape_of(source, spec, ground_z[source.id])
            if isinstance(source, AmbientSource):
                loop = banks.loops[source.id]
                self.beds.append(Bed(np.concatenate([loop] * (-(-block // len(loop)) + 1)), len(loop), shape,
                                     source.reference_m, float(np.abs(loop).max())))
            else:  # the bell
                x, y = source.pos or (0.0, 0.0)
                ticks = spec.tick_hz
                stroke = banks.strokes[source.id]
                self.bells.append(Bell(_padded(stroke), _peak(stroke), (x, y, shape.z), source.reference_m,
                                       round(source.period_s * ticks) * samples_per_tick,
                                       round(source.interval_s * ticks) * samples_per_tick, source.strikes))
        self.voices: list[Emitter] = []
        self.last = Listener(0.0, 0.0, 0.0, 0.0)
        # the mix of a block, reused by every render (one mixing thread)
        self._out = np.zeros((2, block), np.float32)
        self._centre = float(np.float32(self.master))  # the gain of a sound inside the head, a float32's
        self.reach_per_tick = spec.character.run_speed / spec.tick_hz

    def restart(self, listener: Listener) -> None:
        """A reset or restore: whatever was playing stops; sound goes on from this pose."""
        self.voices.clear()
        self.last = listener

    # -- events ---------------------------------------------------------------------------
    def add(self, events: list[SoundEvent]) -> None:
        for event in events:
            at = (event.tick - 1) * self.spt
            if isinstance(event, Footstep):
                code = stable_code(self.seed, event.tick, "footstep")
                variant = code % VARIANTS
                self.voices.append(Emitter(self.footsteps[event.surface][variant], at + event.offset,
                                           (event.x, event.y, event.z), loudness=event.level, brief=True,
                                           peak=self.footstep_peaks[event.surface][variant] * event.level,
                                           scale=np.float32(event.level)))
            elif isinstance(event, Bump):
                code = stable_code(self.seed, event.tick, "bump")
                variant = code % VARIANTS
                self.voices.append(Emitter(self.bumps[event.material][variant], at + event.offset,
                                           (event.x, event.y, event.z), loudness=event.level, brief=True,
                                           peak=self.bump_peaks[event.material][variant] * event.level,
                                           scale=np.float32(event.level)))
            elif isinstance(event, Speech):
                self._hush(at)
                rng = np.random.default_rng([self.seed, event.tick, stable_code(event.speaker)])
                line = babble(rng, self.banks.voices[event.speaker], self.rate, event.seconds)
                # its syllables at 0.7 to 1 of their level: none louder than the loudest syllable
                self.voices.append(Emitter(_padded(line), at, (event.x, event.y, event.z), speech=True,
                                           loudness=self.voice_peak, peak=self.voice_peak))
            elif isinstance(event, Hush):
                self._hush(at)
            elif event.name in self.cues:  # a Cue
                self.voices.append(Emitter(self.cues[event.name], at, event.place, brief=True,
                                           peak=self.cue_peaks[event.name]))

    def _hush(self, at: int) -> None:
        """Cut speech short at sample `at` (nothing before it changes: it may have been heard already)."""
        for emitter in [v for v in self.voices if v.speech and v.end > at]:
            keep = max(0, at - emitter.start)
            fade = int(FADE_S * self.rate)
            signal = emitter.signal[:PAD + keep + fade].copy()
            signal[PAD + keep:] *= np.linspace(1.0, 0.0, len(signal) - PAD - keep, dtype=np.float32)
            emitter.signal = np.concatenate([signal, np.zeros(PAD, np.float32)])

    # -- mixing ---------------------------------------------------------------------------
    def render(self, ticks: list[TickSound]) -> np.ndarray:
        """The PCM of consecutive ticks (at most MAX_BLOCK_TICKS), shaped (ticks * samples_per_tick, 2) int16."""
        n0, size = (ticks[0].tick - 1) * self.spt, len(ticks) * self.spt
        # (knots, 4): x, y, z, yaw; fromiter: np.array would inspect every tuple as a possible array
        poses = np.fromiter(chain(self.last, *(t.listener for t in ticks)), np.float64,
                            4 * (len(ticks) + 1)).reshape(-1, 4)
        self._strike_bells(n0, size)
        reach = len(ticks) * self.reach_per_tick  # how far the listener can have moved within the block
        x, y = self.last.x, self.last.y
        beds = [bed for bed in self.beds
                if bed.shape.distance_from(x, y) <= bed.reference_m * AUDIBLE_REFERENCES + reach]
        # from its first sample (delays only hold sound back) to its last delayed one
        voices = [v for v in self.voices if v.start < n0 + size and v.end + PAD - 1 > n0]
        out = self._out[:, :size]
        # the listener standing still all block: every sound's gains are the same at each tick boundary
        still = all(t.listener == self.last for t in ticks)
        loudest = 0.0
        if beds or voices:
            # how far the ears go within the block, for Shape.nearest (which only needs a bound: any rounding
            # of it gives the same points), in Python: a few numbers, fewer calls than numpy's
            radius = max(math.hypot(t.listener.x - x, t.listener.y - y) for t in ticks)
            loudest = self._mix(out, poses, n0, beds, voices, still, (x, y, radius))
        else:
            out.fill(0.0)
        self.voices = [v for v in self.voices if v.end + PAD > n0 + size]
        self.last = ticks[-1].listener
        # clipped only where it may reach past the 16-bit range
        return self.kernel.to_pcm(self._out, size, loudest * CLIP_MARGIN >= 32767.0)

    def _strike_bells(self, n0: int, size: int) -> None:
        """Strokes that begin within the block join the voices, in the order of their start (as events do)."""
        strokes: list[Emitter] = []
        for bell in self.bells:
            for ring in range(max(1, n0 // bell.period), (n0 + size) // bell.period + 1):
                for strike in range(bell.strikes):
                    start = ring * bell.period + strike * bell.interval
                    if n0 <= start < n0 + size:
                        strokes.append(Emitter(bell.stroke, start, bell.place, bell.reference_m, peak=bell.peak))
        if strokes:
            self.voices = sorted(self.voices + strokes, key=lambda v: v.start)  # stable: ties keep their order

    def _mix(self, out: np.ndarray, poses: np.ndarray, n0: int, beds: list[Bed], voices: list[Emitter],
             still_listener: bool, around: tuple[float, float, float]) -> float:
        """Spatialize every sound playing in the block at once, then add each to both ears: the beds, then
        the voices in the order they started, into out (all of it). Returns a bound on the size of any sample
        of the mix.

        Gains are given at tick boundaries and move in a straight line across each tick. A tick too quiet to
        hear at both ends is left out. All of it is decided tick by tick, so any grouping of ticks gives the
        same samples. Most of a block's cost is calls, not samples, so the sample loops and the arithmetic
        between numpy's transcendental functions are the kernel's (kernel.py: compiled, one call per sound, or
        numpy's, the same bits), and the first sound heard is written to out rather than added to zeros (x + 0
        is x; only a zero's sign could differ, which int16 cannot hold)."""
        knots, spt = len(poses), self.spt
        # the voices whose gains this block needs: not those baked already, nor those inside the head
        needs_gains = [v.baked is None and v.place is not None for v in voices]
        placed = [v for v, needs in zip(voices, needs_gains, strict=True) if needs]
        count = len(beds) + len(placed)
        places = np.empty((count, knots), np.complex128)  # x + iy of each sound as each listener pose hears it
        if beds:
            xs, ys = poses[:, 0], poses[:, 1]
            for row, bed in enumerate(beds):
                segment = bed.shape.only_segment(around)
                if segment is None:  # an area, a point, or a line with several segments that can be nearest
                    places.real[row], places.imag[row] = bed.shape.nearest(xs, ys)
                else:
                    self.kernel.on_segment(places, row, poses, segment)
        voice_places = [v.place for v in placed if v.place is not None]
        if placed:
            places[len(beds):] = np.array([complex(p[0], p[1]) for p in voice_places])[:, None]
        block = BlockGains(np.empty((0, 2, knots), np.float32), np.empty((0, knots - 1), np.bool_))
        heard_at_all: list[bool] = []
        largest: list[float] = []
        still: list[bool] = []
        if count:
            # (sound, 4), spatial's columns REFERENCE, HEIGHT, QUIET, AUDIBLE: its reference distance, height, the
            # gain below which it is too quiet to hear (SILENT over its level), and the distance at which it
            # fades out, in one array for fewer calls
            table = np.array([(b.reference_m, b.shape.z, _quiet(b.loudness), b.reference_m * AUDIBLE_REFERENCES)
                              for b in beds]
                             + [(v.reference_m, p[2], _quiet(v.loudness), v.reference_m * AUDIBLE_REFERENCES)
                                for v, p in zip(placed, voice_places, strict=True)])
            # (sounds, ears, knots), in steps of the 16-bit output
            gains = spatial.ears(places, table, poses, self.master, self.kernel.levels)
            audible, largest, heard_at_all, still = self.kernel.audibility(gains, table, still_listener)
            block = BlockGains(gains, audible)
            self.kernel.prepare(block)
        size = out.shape[1]
        loudest, written = 0.0, False
        for row, bed in enumerate(beds):
            if not heard_at_all[row]:
                continue
            phase = n0 % bed.length
            self.kernel.weigh(self._out, 0, size, bed.loop, (phase, phase), block, row, still[row], not written)
            written = True
            loudest += bed.loudness * largest[row]
        row = len(beds) - 1
        for emitter, needs in zip(voices, needs_gains, strict=True):
            if needs:
                row += 1
                if not heard_at_all[row]:
                    continue
            a, b = max(0, emitter.start - n0), min(size, emitter.end + PAD - 1 - n0)
            whole = (a, b) == (0, size)
            if emitter.brief or emitter.place is None:
                if emitter.baked is None:
                    self._bake(emitter, block.gains[row] if needs else None, poses, n0,
                               largest[row] if needs else self.master)
                    assert emitter.baked is not None
                if not written and not whole:
                    out.fill(0.0)
                self.kernel.add(self._out, a, b, emitter.baked, n0 - emitter.start, not written)
                written = True
                loudest += emitter.baked_peak
                continue
            if emitter.delays is None:  # those of the listener pose at the end of the tick it starts in
                knot = min(max((emitter.start - n0) // spt + 1, 0), knots - 1)
                emitter.delays = self._delays(emitter.place, poses, knot)
            if not written and not whole:
                out.fill(0.0)
            # signal[PAD] plays at emitter.start, each ear's delay later
            left, right = (PAD + n0 - emitter.start - delay for delay in emitter.delays)
            self.kernel.weigh(self._out, a, b, emitter.signal, (left, right), block, row, still[row], not written)
            written = True
            loudest += emitter.peak * largest[row]
        if not written:
            out.fill(0.0)
        return loudest

    def _bake(self, emitter: Emitter, gains: np.ndarray | None, poses: np.ndarray, n0: int, largest: float) -> None:
        """A brief sound keeps the ears' gains (its row of the block's, or None inside the head) and delays of
        the listener pose at the end of the tick it starts in (inside the head: full level, no delay), so what
        each ear hears of it is fixed once: mixing it is then a single addition per block."""
        length = len(emitter.signal) - PAD - 1  # its first sample to its last delayed one
        baked = np.empty((2, length), np.float32)
        ears: tuple[float, float]
        if emitter.place is None or gains is None:
            ears, delays = (self._centre, self._centre), (0, 0)
        else:
            knot = min(max((emitter.start - n0) // self.spt + 1, 0), len(poses) - 1)
            left, right = gains[:, knot].tolist()
            ears, delays = (left, right), self._delays(emitter.place, poses, knot)
        self.kernel.bake(baked, emitter.signal, (PAD - delays[0], PAD - delays[1]), ears, emitter.scale)
        emitter.baked = baked
        # largest: its largest gain in this block, so at least the one it keeps
        emitter.baked_peak = emitter.peak * (self.master if emitter.place is None else largest)

    def _delays(self, place: tuple[float, float, float], poses: np.ndarray, knot: int) -> tuple[int, int]:
        x, y, z, yaw = poses[knot].tolist()  # Python floats: math on numpy's scalars is several times slower
        return spatial.interaural_delays(place[0], place[1], (x, y, z, yaw), self.rate)
