"""Short sounds of things happening: the interactables' actions, dialogue opening and closing, and the bell.

Each interactable kind has its cue (door creak, lever clank, chest with a sparkle, mailbox flap, the clock
winder's ratchet, a pickup chime, paper for signs); CUES maps the names the director uses to makers.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from core.world.sound import dsp

Maker = Callable[[np.random.Generator, int], np.ndarray]


def _tone(rate: int, n: int, freq: float, decay_s: float, delay_s: float = 0.0, harmonics: int = 3) -> np.ndarray:
    t = np.arange(n) / rate
    wave = sum(np.sin(2 * np.pi * freq * k * t) / k ** 1.5 for k in range(1, harmonics + 1))
    return wave * dsp.decay(n, rate, decay_s, attack_s=0.004, delay_s=delay_s)


def _creak(rng: np.random.Generator, rate: int, n: int, low_hz: float, high_hz: float) -> np.ndarray:
    """Stick-slip: a buzzy pulse train whose rate wanders upward, through a wooden body."""
    t = np.arange(n) / rate
    rate_hz = low_hz + (high_hz - low_hz) * (t / t[-1]) ** 0.7 * (1 + 0.25 * dsp.smooth_random(rng, n, rate, 30))
    phase = np.cumsum(rate_hz) / rate
    pulses = (np.diff(np.floor(phase), prepend=0.0) > 0).astype(float)
    body = dsp.band(np.convolve(pulses, np.exp(-np.arange(120) / 20.0))[:n], rate, 300, 3500)
    return dsp.unit_rms(body) * np.clip(t / 0.05, 0, 1) * np.clip((t[-1] - t) / 0.1, 0, 1)


def door(rng: np.random.Generator, rate: int) -> np.ndarray:
    n = dsp.seconds(rate, 1.0)
    creak = np.zeros(n)
    dsp.add_at(creak, 0, _creak(rng, rate, dsp.seconds(rate, 0.7), 60, 240))
    thunk = dsp.modes(n, rate, [230, 560, 900], [0.12, 0.08, 0.05], [1, 0.5, 0.3], rng)
    return 0.5 * creak + 0.6 * np.roll(thunk, dsp.seconds(rate, 0.72))


def lever(rng: np.random.Generator, rate: int) -> np.ndarray:
    n = dsp.seconds(rate, 1.3)
    clank = dsp.modes(n, rate, [700, 1830, 3120, 4400], [0.25, 0.2, 0.12, 0.08], [1, 0.7, 0.5, 0.3], rng)
    clicks = np.zeros(n)
    for i in range(3):
        dsp.add_at(clicks, dsp.seconds(rate, 0.05 + 0.04 * i), dsp.burst(rng, rate, 2000, 7000, 0.004))
    gate = np.zeros(n)
    dsp.add_at(gate, dsp.seconds(rate, 0.45), _creak(rng, rate, dsp.seconds(rate, 0.8), 40, 120))
    return 0.6 * clank + 0.3 * clicks + 0.35 * gate


def chest(rng: np.random.Generator, rate: int) -> np.ndarray:
    n = dsp.seconds(rate, 1.6)
    creak = np.zeros(n)
    dsp.add_at(creak, 0, _creak(rng, rate, dsp.seconds(rate, 0.45), 80, 300))
    lid = np.roll(dsp.modes(n, rate, [260, 610, 1010], [0.1, 0.07, 0.05], [1, 0.6, 0.3], rng), dsp.seconds(rate, 0.45))
    sparkle = sum(_tone(rate, n, f, 0.35, delay_s=0.55 + 0.09 * i) for i, f in enumerate([1047, 1319, 1568, 2093]))
    return 0.45 * creak + 0.5 * lid + 0.3 * sparkle


def mailbox(rng: np.random.Generator, rate: int) -> np.ndarray:
    n = dsp.seconds(rate, 0.9)
    flap = dsp.modes(n, rate, [910, 2330, 3870], [0.12, 0.09, 0.06], [1, 0.6, 0.4], rng)
    paper = dsp.band_noise(rng, n, rate, 2000, 7000) * dsp.decay(n, rate, 0.08, attack_s=0.03, delay_s=0.12)
    shut = np.roll(flap, dsp.seconds(rate, 0.45)) * 0.7
    return 0.5 * flap + 0.25 * paper + 0.5 * shut


def winder(rng: np.random.Generator, rate: int) -> np.ndarray:
    """The clock winder: a ratchet cranked, then the clock ticking again."""
    n = dsp.seconds(rate, 2.6)
    out = np.zeros(n)
    for i in range(7):
        dsp.add_at(out, dsp.seconds(rate, 0.07 * i), 0.5 * dsp.burst(rng, rate, 2500, 8000, 0.005))
    for i in range(4):
        freq = 1250.0 if i % 2 == 0 else 950.0
        tick = dsp.modes(dsp.seconds(rate, 0.15), rate, [freq, freq * 2.7], [0.03, 0.02], [1, 0.4])
        dsp.add_at(out, dsp.seconds(rate, 0.7 + 0.5 * i), 0.5 * tick)
    return out


def chime(rng: np.random.Generator, rate: int) -> np.ndarray:
    n = dsp.seconds(rate, 0.9)
    return 0.5 * _tone(rate, n, 1319, 0.25) + 0.5 * _tone(rate, n, 1976, 0.4, delay_s=0.11)


def paper(rng: np.random.Generator, rate: int) -> np.ndarray:
    n = dsp.seconds(rate, 0.5)
    rustle = dsp.band(dsp.crackle(rng, n, rate, 1800, 0.6), rate, 1800, 8000)
    envelope = sum(dsp.decay(n, rate, 0.05, attack_s=0.02, delay_s=d) for d in (0.0, 0.14, 0.28))
    return dsp.unit_rms(rustle) * envelope


def dialogue_open(rng: np.random.Generator, rate: int) -> np.ndarray:
    n = dsp.seconds(rate, 0.25)
    return 0.5 * _tone(rate, n, 660, 0.05, harmonics=2) + 0.5 * _tone(rate, n, 990, 0.06, 0.07, harmonics=2)


def dialogue_close(rng: np.random.Generator, rate: int) -> np.ndarray:
    n = dsp.seconds(rate, 0.25)
    return 0.5 * _tone(rate, n, 990, 0.05, harmonics=2) + 0.5 * _tone(rate, n, 660, 0.06, 0.07, harmonics=2)


CUES: dict[str, Maker] = {
    "door": door, "lever": lever, "chest": chest, "mailbox": mailbox, "switch": winder, "item": chime,
    "sign": paper, "dialogue_open": dialogue_open, "dialogue_close": dialogue_close,
}
# The partials of a tower bell (ratio to the strike note, level, decay in s): hum, prime, tierce, quint, nominal...
_BELL = [(0.5, 0.55, 3.5), (1.0, 1.0, 2.6), (1.19, 0.5, 2.0), (1.5, 0.3, 1.6), (2.0, 0.7, 1.4), (2.51, 0.25, 1.0),
         (3.0, 0.25, 0.8), (4.07, 0.15, 0.5)]
BELL_S = 7.0  # long enough for the hum to die away (it is faded out over the last two seconds)


def bell(rng: np.random.Generator, rate: int, pitch_hz: float) -> np.ndarray:
    """One stroke: inharmonic partials, each a slowly beating pair, and the clapper's strike."""
    n = dsp.seconds(rate, BELL_S)
    t = np.arange(n) / rate
    out = np.zeros(n)
    for ratio, level, decay_s in _BELL:
        freq = pitch_hz * ratio
        attack = 0.02 if ratio < 1 else 0.002  # the hum swells in: the strike itself is in the upper partials
        beating = np.sin(2 * np.pi * freq * t + rng.uniform(0, 6.3)) + np.sin(2 * np.pi * (freq + 0.4) * t)
        out += level * 0.5 * beating * dsp.decay(n, rate, decay_s, attack_s=attack)
    out += 0.3 * dsp.band_noise(rng, n, rate, 1500, 7000) * dsp.decay(n, rate, 0.012)
    return dsp.peak_normalized(dsp.tail_faded(out, rate, 2.0)).astype(np.float32)
