"""Mixes every audible sound into stereo int16 PCM for a run of ticks.

The result does not depend on how the ticks are grouped: a tick's samples are a pure function of the
listener poses at its start and end, the events so far, and the sample index. Gains move in a straight line
across each tick (no zipper noise when the camera turns, no clicks at tick boundaries), loops are read at
(sample index mod length), and sounds are summed in a fixed order. So a lockstep hold of 15 ticks sounds
bit for bit like 15 holds of one tick, or like real time.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.world.content import WorldSpec
from core.world.sound import spatial
from core.world.sound.banks import VARIANTS, Banks, stable_code
from core.world.sound.events import Bump, Footstep, Hush, Listener, SoundEvent, Speech, TickSound
from core.world.sound.voice import babble
from core.world.sound_spec import AmbientSource

PAD = 24  # zeros around every one-shot: more than the largest interaural delay in samples
MAX_BLOCK_TICKS = 64
AUDIBLE_REFERENCES = 8.0  # a source fades out completely at this many times its reference distance
SILENT = 4.0  # a sound quieter than this (in steps of the 16-bit output, -78 dB full scale) is left out
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
    loudness: float = 1.0  # its peak, to tell when it is too far to hear
    # Whole-sample delays of the left and right ear, fixed when it starts: the time difference says where
    # it began; while it plays, the level difference follows the camera.
    delays: tuple[int, int] | None = None
    # A brief sound of the character's own (a footfall, a bump, a cue) keeps the ears' gains it started with:
    # over its fraction of a second they hardly change, and a fixed gain costs far less to mix.
    brief: bool = False
    gains: np.ndarray | None = None

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
    place: tuple[float, float, float]
    reference_m: float
    period: int  # samples
    interval: int
    strikes: int


@dataclass
class Playing:
    """A sound heard during a block: played over block samples a..b, with signal[origin + i - delay] at
    block sample i, from (x, y, z) (x and y: a value, or one per listener pose)."""

    signal: np.ndarray
    origin: int
    a: int
    b: int
    x: float | np.ndarray
    y: float | np.ndarray
    z: float
    reference_m: float
    loudness: float
    emitter: Emitter | None = None


def _padded(signal: np.ndarray) -> np.ndarray:
    return np.concatenate([np.zeros(PAD, np.float32), signal.astype(np.float32), np.zeros(PAD, np.float32)])


class Mixer:
    def __init__(self, spec: WorldSpec, banks: Banks, samples_per_tick: int, ground_z: dict[str, float]) -> None:
        self.banks = banks
        self.seed = spec.sound.seed
        self.rate = spec.sound.rate
        self.spt = samples_per_tick
        self.master = spec.sound.gain * 32767.0  # gains include it: the mix is in steps of the 16-bit output
        self.frac = (np.arange(samples_per_tick) / samples_per_tick).astype(np.float32)
        self.footsteps = {k: [_padded(s) for s in v] for k, v in banks.footsteps.items()}
        self.bumps = {k: [_padded(s) for s in v] for k, v in banks.bumps.items()}
        self.cues = {k: _padded(v) for k, v in banks.cues.items()}
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
                self.bells.append(Bell(_padded(banks.strokes[source.id]), (x, y, shape.z), source.reference_m,
                                       round(source.period_s * ticks) * samples_per_tick,
                                       round(source.interval_s * ticks) * samples_per_tick, source.strikes))
        self.voices: list[Emitter] = []
        self.last = Listener(0.0, 0.0, 0.0, 0.0)
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
                signal = self.footsteps[event.surface][code % VARIANTS] * np.float32(event.level)
                self.voices.append(Emitter(signal, at + event.offset, (event.x, event.y, event.z),
                                           loudness=event.level, brief=True))
            elif isinstance(event, Bump):
                code = stable_code(self.seed, event.tick, "bump")
                signal = self.bumps[event.material][code % VARIANTS] * np.float32(event.level)
                self.voices.append(Emitter(signal, at + event.offset, (event.x, event.y, event.z),
                                           loudness=event.level, brief=True))
            elif isinstance(event, Speech):
                self._hush(at)
                rng = np.random.default_rng([self.seed, event.tick, stable_code(event.speaker)])
                line = babble(rng, self.banks.voices[event.speaker], self.rate, event.seconds)
                self.voices.append(Emitter(_padded(line), at, (event.x, event.y, event.z), speech=True,
                                           loudness=self.voice_peak))
            elif isinstance(event, Hush):
                self._hush(at)
            elif event.name in self.cues:  # a Cue
                self.voices.append(Emitter(self.cues[event.name], at, event.place, brief=True))

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
        poses = np.array([self.last, *(t.listener for t in ticks)])  # (knots, 4): x, y, z, yaw
        self._strike_bells(n0, size)
        playing: list[Playing] = []
        reach = len(ticks) * self.reach_per_tick  # how far the listener can have moved within the block
        for bed in self.beds:
            if bed.shape.distance_from(self.last.x, self.last.y) <= bed.reference_m * AUDIBLE_REFERENCES + reach:
                sx, sy = bed.shape.nearest(poses[:, 0], poses[:, 1])
                playing.append(Playing(bed.loop, n0 % bed.length, 0, size, sx, sy, bed.shape.z, bed.reference_m,
                                       bed.loudness))
        for emitter in self.voices:
            # from its first sample (delays only hold sound back) to its last delayed one
            a, b = max(0, emitter.start - n0), min(size, emitter.end + PAD - 1 - n0)
            if a < b:
                x, y, z = emitter.place if emitter.place is not None else (0.0, 0.0, 0.0)
                playing.append(Playing(emitter.signal, PAD + n0 - emitter.start, a, b, x, y, z, emitter.reference_m,
                                       emitter.loudness, emitter))
        out = np.zeros((2, size), np.float32)
        if playing:
            self._mix(out, poses, n0, playing)
        self.voices = [v for v in self.voices if v.end + PAD > n0 + size]
        self.last = ticks[-1].listener
        np.minimum(out, 32767.0, out=out)
        np.maximum(out, -32768.0, out=out)
        return out.T.astype(np.int16, order="C")  # interleaved: the ring's layout

    def _strike_bells(self, n0: int, size: int) -> None:
        """Strokes that begin within the block join the voices, in the order of their start (as events do)."""
        strokes: list[Emitter] = []
        for bell in self.bells:
            for ring in range(max(1, n0 // bell.period), (n0 + size) // bell.period + 1):
                for strike in range(bell.strikes):
                    start = ring * bell.period + strike * bell.interval
                    if n0 <= start < n0 + size:
                        strokes.append(Emitter(bell.stroke, start, bell.place, bell.reference_m))
        if strokes:
            self.voices = sorted(self.voices + strokes, key=lambda v: v.start)  # stable: ties keep their order

    def _mix(self, out: np.ndarray, poses: np.ndarray, n0: int, playing: list[Playing]) -> None:
        """Spatialize every sound playing in the block at once, then add each to both ears.

        Gains are given at tick boundaries and move in a straight line across each tick. A tick too quiet to
        hear at both ends is left out. All of it is decided tick by tick, so any grouping of ticks gives the
        same samples."""
        knots = len(poses)
        sx, sy = np.empty((len(playing), knots)), np.empty((len(playing), knots))
        for row, sound in enumerate(playing):
            sx[row], sy[row] = sound.x, sound.y
        references = np.array([[p.reference_m] for p in playing])
        gains = spatial.ears(sx, sy, np.array([[p.z] for p in playing]), poses, references,
                             references * AUDIBLE_REFERENCES).transpose(0, 2, 1)  # (sounds, ears, knots)
        gains *= np.float32(self.master)
        # A tick is left out where the sound is too quiet to hear at both of its ends, in both ears.
        heard = gains.max(axis=1) * np.array([[p.loudness] for p in playing], np.float32) >= SILENT  # (sounds, knots)
        audible = (heard[:, :-1] | heard[:, 1:])[:, None, :]  # (sounds, 1, ticks)
        start, end = gains[..., :-1] * audible, gains[..., 1:] * audible  # (sounds, ears, ticks)
        mute = ~audible.any(axis=(1, 2))
        flat = gains.min(axis=2) == gains.max(axis=2)
        still = flat.all(axis=1) & audible.all(axis=(1, 2))
        spt, centre = self.spt, np.full((2, 1), self.master, np.float32)
        for index, sound in enumerate(playing):
            if mute[index]:
                continue
            a, b, signal = sound.a, sound.b, sound.signal
            k0, k1 = a // spt, (b - 1) // spt + 1
            gain: np.ndarray
            emitter = sound.emitter
            if emitter is not None and emitter.place is None:
                gain = centre  # inside the head: both ears alike
            elif emitter is not None and emitter.brief:
                if emitter.gains is None:  # the gains at the end of the tick it starts in
                    knot = min(max((emitter.start - n0) // spt + 1, 0), knots - 1)
                    emitter.gains = gains[index, :, knot:knot + 1].copy()
                gain = emitter.gains
            elif still[index]:
                gain = end[index, :, :1]
            else:
                first, last = start[index, :, k0:k1, None], end[index, :, k0:k1, None]
                gain = (first + (last - first) * self.frac).reshape(2, -1)[:, a - k0 * spt:b - k0 * spt]
            left, right = self._delays(sound, poses, n0)
            begin = sound.origin + a
            if left == right:
                out[:, a:b] += signal[begin - left:begin - left + b - a] * gain
            else:
                out[0, a:b] += signal[begin - left:begin - left + b - a] * gain[0]
                out[1, a:b] += signal[begin - right:begin - right + b - a] * gain[1]

    def _delays(self, sound: Playing, poses: np.ndarray, n0: int) -> tuple[int, int]:
        """Ambience: none. An emitter: those of the listener pose at the end of the tick it starts in."""
        emitter = sound.emitter
        if emitter is None or emitter.place is None:
            return 0, 0
        if emitter.delays is None:
            knot = min(max((emitter.start - n0) // self.spt + 1, 0), len(poses) - 1)
            emitter.delays = spatial.interaural_delays(emitter.place[0], emitter.place[1], poses[knot], self.rate)
        return emitter.delays
