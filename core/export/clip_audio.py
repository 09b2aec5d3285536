"""A clip's soundtrack: the recorded sound of the ticks each picture stands for, laid under that picture.

A picture at tick t that stays until tick u plays the sound of ticks t + 1..u (so a frame at tick t shows the
sound up to t, as in the game). Where the clip runs on the game's clock (continuous frames at 1x), the sound
is the recording's, sample for sample. Where it does not (`--speed`, step images shown a fixed time each),
each picture's sound is resampled to the time the picture is on screen: faster sounds higher, slower lower,
but every bump stays under the picture it belongs to. The last picture's extra hold is silent, as are ticks
no step's sound covers (a step recorded without it, damaged sound).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.export.clip_plan import ClipPlan, Shot


@dataclass(frozen=True)
class StepSound:
    """One step's recorded sound and the ticks it covers (first..last, inclusive)."""

    samples: np.ndarray  # int16 (frames, channels)
    first_tick: int
    last_tick: int


class TickSound:
    """The recorded sound of any tick range, from the steps' sounds (silence where none covers a tick)."""

    def __init__(self, steps: Sequence[StepSound], channels: int) -> None:
        self.steps = sorted(steps, key=lambda s: s.first_tick)
        self.channels = channels
        # Steps' sounds follow each other without overlapping, so their last ticks rise too: found by bisection.
        self._last_ticks = np.fromiter((s.last_tick for s in self.steps), np.int64, len(self.steps))
        self._per_tick = self._frames_per_tick()

    def per_tick(self) -> float:
        return self._per_tick

    def _frames_per_tick(self) -> float:
        """Frames per tick (the built-in world: 800 at 24 kHz and 30 ticks/s)."""
        for step in self.steps:
            ticks = step.last_tick - step.first_tick + 1
            if ticks > 0 and len(step.samples):
                return len(step.samples) / ticks
        return 0.0

    def ticks(self, first: int, last: int) -> np.ndarray:
        """The sound of ticks first..last (inclusive), int16 (frames, channels)."""
        per_tick = self.per_tick()
        count = max(0, last - first + 1)
        out = np.zeros((round(count * per_tick), self.channels), np.int16)
        for at_step in range(int(np.searchsorted(self._last_ticks, first, side="left")), len(self.steps)):
            step = self.steps[at_step]
            if step.first_tick > last:
                break
            low, high = max(first, step.first_tick), min(last, step.last_tick)
            if low > high:
                continue
            span = step.last_tick - step.first_tick + 1
            frames = len(step.samples)
            start = round((low - step.first_tick) * frames / span)
            stop = round((high + 1 - step.first_tick) * frames / span)
            at = round((low - first) * per_tick)
            piece = step.samples[start:stop][:max(0, len(out) - at)]
            out[at:at + len(piece)] = piece
        return out


def fit(samples: np.ndarray, frames: int) -> np.ndarray:
    """`samples` played in `frames` frames: as they are when the lengths agree within a frame (cut or padded
    by one), else resampled by linear interpolation."""
    channels = samples.shape[1]
    if frames <= 0:
        return np.zeros((0, channels), np.int16)
    if abs(len(samples) - frames) <= 1 or len(samples) < 2:
        out = np.zeros((frames, channels), np.int16)
        out[:min(frames, len(samples))] = samples[:frames]
        return out
    where = np.linspace(0, len(samples) - 1, frames)
    columns = [np.interp(where, np.arange(len(samples)), samples[:, c].astype(np.float64)) for c in range(channels)]
    return np.clip(np.round(np.stack(columns, axis=1)), -32768, 32767).astype(np.int16)


class Soundtrack:
    """The soundtrack of a plan, handed out picture by picture in step with the pictures' clock."""

    def __init__(self, plan: ClipPlan, sound: TickSound, rate: int, speed: float) -> None:
        self.plan, self.sound, self.rate, self.speed = plan, sound, rate, speed
        self._seconds = 0.0
        self._written = 0

    def next(self, shot: Shot) -> np.ndarray:
        """The sound under `shot` (call once per shot, in order): as many frames as its time on screen holds."""
        self._seconds += shot.seconds
        due = round(self._seconds * self.rate)
        frames, self._written = due - self._written, due
        pcm = self.sound.ticks(shot.tick + 1, shot.end_tick)
        if self.plan.continuous:
            # On the game's clock (scaled by the speed); the last picture's extra hold is silence.
            game_seconds = max(0, shot.end_tick - shot.tick) / self.plan.tick_hz / self.speed
            heard = min(frames, round(game_seconds * self.rate))
        else:
            heard = frames  # a step image stands for its whole step, however long it is shown
        out = np.zeros((max(0, frames), self.sound.channels), np.int16)
        out[:heard] = fit(pcm, heard)
        return out
