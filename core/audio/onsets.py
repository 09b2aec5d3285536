"""Onsets: the moments a band of the sound jumps up, as an ear would notice them.

`band_onsets` finds them in any band; `detect_bumps` is tuned to the built-in world's bump, a low body thud
(70-140 Hz) that its footsteps leave out, so it finds the moments the character pressed against something,
invisible walls included, from the sound alone. Both read only PCM: they need nothing from the game.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from core.audio.spectrum import spectra, to_db

BUMP_BAND_HZ = (50.0, 170.0)
HOP = 240  # samples between spectra (10 ms at 24 kHz)
WINDOW = 1024
SMEAR = 2  # frames before an onset that its window already reaches into


@dataclass(frozen=True)
class Onset:
    sample: int  # where the rise begins, in samples from the first
    time_s: float
    rise_db: float  # how far the band rose above its level just before
    share: float  # the band's share of all the power (40 Hz up) at the onset


def band_onsets(pcm: np.ndarray, rate: int, low_hz: float, high_hz: float, rise_db: float = 12.0,
                min_share: float = 0.0, floor_level_db: float = -80.0, memory_s: float = 0.2,
                min_gap_s: float = 0.15) -> list[Onset]:
    """Frames where the band's level starts to stand at least rise_db above its mean level over the
    memory_s before, while it holds at least min_share of all the power and is louder than floor_level_db
    (dB full scale); of several within min_gap_s, the first (with the strongest rise)."""
    spec = spectra(pcm, rate, WINDOW, HOP)
    band = spec.band(low_hz, high_hz).sum(axis=0)
    total = spec.band(40.0, rate / 2).sum(axis=0)
    level = to_db(band)
    back = max(1, round(memory_s * rate / HOP))
    # The band's mean power over memory_s just before, leaving out the few frames a window's length before
    # (they already hear the start of the rise): a mean, not a minimum, so a noisy band's dips are no rises.
    padded = np.concatenate([np.full(back + SMEAR, band[0]), band])
    floor = to_db(sliding_window_view(padded, back)[:len(band)].mean(axis=1))
    rise = level - floor
    share = band / np.maximum(total, 1e-20)
    candidate = (rise >= rise_db) & (share >= min_share) & (level >= floor_level_db)
    candidate[1:] &= ~candidate[:-1]  # where a rise begins, not every frame it lasts
    gap = max(1, round(min_gap_s * rate / HOP))
    onsets: list[Onset] = []
    last = -gap - 1
    for frame in np.flatnonzero(candidate):
        if frame - last <= gap:  # the same rise, or one too close to it: keep the stronger
            if rise[frame] > onsets[-1].rise_db:
                onsets[-1] = Onset(onsets[-1].sample, onsets[-1].time_s, float(rise[frame]), float(share[frame]))
            continue
        sample = int(frame * HOP + WINDOW // 2)  # the middle of the frame's window
        onsets.append(Onset(sample, sample / rate, float(rise[frame]), float(share[frame])))
        last = frame
    return onsets


def detect_bumps(pcm: np.ndarray, rate: int) -> list[Onset]:
    """The moments the character bumped into something, heard in the built-in world's sound: a sudden rise
    of the low thud band that dominates the spectrum (footsteps, voices and the bell are mostly higher)."""
    return band_onsets(pcm, rate, *BUMP_BAND_HZ, rise_db=15.0, min_share=0.35, floor_level_db=-75.0)
