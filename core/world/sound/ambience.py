"""The places' own sounds, as seamless loops made once at start-up: a stream, the sea, a fountain, gulls,
market chatter. Loops have different lengths so that their sum never repeats as a whole.

A loop is read at (sample index mod its length), which makes every source a pure function of game time:
after a restore or with any step size, the same tick sounds the same.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from core.world.sound import dsp
from core.world.sound.voice import VoiceTraits, babble, syllable_bank


def _scattered(rng: np.random.Generator, n: int, kinds: list[np.ndarray], count: int) -> np.ndarray:
    """`count` copies of sounds drawn from `kinds`, at random times and levels (bubbles, droplets)."""
    out = np.zeros(n)
    longest = max(len(k) for k in kinds)
    starts, chosen, levels = rng.integers(0, n - longest, count), rng.integers(0, len(kinds), count), \
        rng.uniform(0.2, 1.0, count)
    for index in range(count):
        dsp.add_at(out, int(starts[index]), float(levels[index]) * kinds[int(chosen[index])])
    return out


def water(rng: np.random.Generator, rate: int) -> np.ndarray:
    """A stream: a wandering rush, and bubbles popping up the scale."""
    n = dsp.seconds(rate, 8.25)
    rush = dsp.band_noise(rng, n, rate, 300, 3500) * (1 + 0.35 * dsp.smooth_random(rng, n, rate, 3))
    short = dsp.seconds(rate, 0.06)
    kinds = [np.sin(dsp.glide(short, rate, f, f * rng.uniform(1.3, 1.9), 0.01)) * dsp.decay(short, rate, 0.012)
             for f in rng.uniform(450, 1500, 24)]
    bubbles = _scattered(rng, n, kinds, int(45 * n / rate))
    return dsp.looped(0.5 * rush + 0.9 * bubbles, rate)


def surf(rng: np.random.Generator, rate: int) -> np.ndarray:
    """The sea: waves rolling in every 5 to 8 s (a low roar) and washing back (hiss), over a quiet bed."""
    n = dsp.seconds(rate, 21.5)
    swell = np.full(n, 0.2)
    wash = np.full(n, 0.15)
    t = 0.5
    while t < n / rate:
        rise = dsp.seconds(rate, rng.uniform(1.2, 2.0))
        fall = dsp.seconds(rate, rng.uniform(2.0, 3.5))
        shape = np.concatenate([np.sin(0.5 * np.pi * np.linspace(0, 1, rise)) ** 2,
                                np.exp(-np.arange(fall) / (fall / 3))])
        start = int(t * rate)
        dsp.add_at(swell, start, rng.uniform(0.6, 1.0) * shape)
        dsp.add_at(wash, start + rise // 2, shape * rng.uniform(0.5, 0.9))  # the wash follows the wave in
        t += rng.uniform(5.0, 8.0)
    roar = dsp.band_noise(rng, n, rate, 170, 900) * swell  # above the bumps' thud, so a bump stays audible
    hiss = dsp.band_noise(rng, n, rate, 1200, 7000) * wash
    return dsp.looped(0.8 * roar + 0.45 * hiss, rate, fade_s=1.0)


def fountain(rng: np.random.Generator, rate: int) -> np.ndarray:
    """Falling water: a steady bright splash and droplets."""
    n = dsp.seconds(rate, 6.5)
    splash = dsp.band(rng.standard_normal(n) + 2 * dsp.crackle(rng, n, rate, 3000, 0.5), rate, 500, 9000,
                      edge=0.4, tilt_db=-3.0)
    splash = dsp.unit_rms(splash) * (1 + 0.15 * dsp.smooth_random(rng, n, rate, 6))
    short = dsp.seconds(rate, 0.03)
    kinds = [np.sin(dsp.glide(short, rate, f, f * 1.5, 0.006)) * dsp.decay(short, rate, 0.006)
             for f in rng.uniform(1500, 4000, 24)]
    drops = _scattered(rng, n, kinds, int(60 * n / rate))
    return dsp.looped(0.5 * splash + 0.6 * drops, rate)


def gulls(rng: np.random.Generator, rate: int) -> np.ndarray:
    """Gulls: now and then two to four cries ('kyow'), raspy and sliding down."""
    n = dsp.seconds(rate, 27.75)
    out = np.zeros(n)
    t = rng.uniform(0.5, 3.0)
    while t < n / rate - 2.0:
        for _ in range(int(rng.integers(2, 5))):
            length = dsp.seconds(rate, rng.uniform(0.18, 0.3))
            top = rng.uniform(1900, 2400)
            phase = dsp.glide(length, rate, top, top * 0.58, 0.08)
            rasp = 1 + 0.5 * np.sin(2 * np.pi * 75 * np.arange(length) / rate)
            cry = sum(np.sin(k * phase) / k for k in (1, 2, 3)) * rasp
            envelope = np.sin(np.pi * np.linspace(0, 1, length)) ** 0.7
            dsp.add_at(out, int(t * rate), cry * envelope * rng.uniform(0.5, 1.0))
            t += length / rate + rng.uniform(0.08, 0.2)
        t += rng.uniform(3.0, 8.0)
    return dsp.looped(out, rate, fade_s=0.05)


def chatter(rng: np.random.Generator, rate: int) -> np.ndarray:
    """A market: several people talking at once, none close enough to follow."""
    n = dsp.seconds(rate, 12.5)
    out = np.zeros(n)
    for _ in range(7):
        traits = VoiceTraits(float(rng.uniform(95, 250)), float(rng.uniform(0.9, 1.2)), float(rng.uniform(0.09, 0.14)),
                             float(rng.uniform(0.0, 0.3)))
        bank = syllable_bank(rng, rate, traits, count=5)
        t = rng.uniform(0, 2)
        while t < n / rate:
            phrase = babble(rng, bank, rate, rng.uniform(0.8, 2.5))
            dsp.add_at(out, int(t * rate), phrase * rng.uniform(0.3, 1.0))
            t += len(phrase) / rate + rng.uniform(0.3, 1.5)
    murmur = dsp.band_noise(rng, n, rate, 250, 2500) * 0.08
    return dsp.looped(dsp.band(dsp.unit_rms(out) + murmur, rate, 220, 6000), rate)


LOOPS: dict[str, Callable[[np.random.Generator, int], np.ndarray]] = {
    "water": water, "surf": surf, "fountain": fountain, "gulls": gulls, "chatter": chatter,
}
