"""Footsteps (one timbre per surface, from the world file) and bumps (a body's thud plus the material hit).

The two are kept apart in frequency on purpose: every bump carries a low thud (BUMP_THUD_HZ) that no
footstep has (footsteps are high-passed above it), so a listener, or the bump detector in core/audio/onsets.py,
can tell "walked into something" from "walked" by ear.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from core.world.sound import dsp
from core.world.sound_spec import FootstepTimbre

BUMP_THUD_HZ = (70.0, 140.0)  # the thud slides from the upper to the lower frequency
FOOTSTEP_FLOOR_HZ = 220.0  # footsteps carry nothing below this


def footstep(rng: np.random.Generator, rate: int, timbre: FootstepTimbre) -> np.ndarray:
    """A heel strike and a softer toe roll: a click, then a burst of the surface's noise (grainy or smooth)
    falling off towards the top of its band, and the knock of a hard surface."""
    decay_s = timbre.decay_ms / 1000
    roll_s = decay_s * 0.6 + 0.03
    n = dsp.seconds(rate, roll_s + decay_s * 3.5)  # down 30 dB by then; the tail is faded out
    low, high = timbre.noise_band
    texture = (1 - timbre.grain) * rng.standard_normal(n) + timbre.grain * 3 * dsp.crackle(rng, n, rate, 900)
    texture = dsp.unit_rms(dsp.band(texture, rate, low, high, edge=0.4, tilt_db=-3.0))
    envelope = dsp.decay(n, rate, decay_s) + 0.5 * dsp.decay(n, rate, decay_s * 0.8, delay_s=roll_s)
    sound = texture * envelope
    heel = dsp.burst(rng, rate, low, 11000, 0.003) * (1.5 - timbre.grain)  # hard soles on hard ground click
    dsp.add_at(sound, 0, heel)
    if timbre.knock_hz > 0:
        knock = dsp.modes(n, rate, [timbre.knock_hz, timbre.knock_hz * 2.41], [decay_s * 0.7, decay_s * 0.4],
                          [1.0, 0.4], rng)
        sound += 0.8 * knock * (1 + 0.5 * dsp.decay(n, rate, decay_s, delay_s=roll_s))
    sound = dsp.band(sound, rate, FOOTSTEP_FLOOR_HZ, 11000, edge=0.1)
    return dsp.peak_normalized(dsp.tail_faded(sound, rate), timbre.gain).astype(np.float32)


def thud(rng: np.random.Generator, rate: int) -> np.ndarray:
    """The body meeting something: a low sliding knock and a puff of low noise."""
    n = dsp.seconds(rate, 0.45)
    high, low = BUMP_THUD_HZ[1], BUMP_THUD_HZ[0]
    tone = np.sin(dsp.glide(n, rate, high, low, 0.04)) * dsp.decay(n, rate, 0.09, attack_s=0.003)
    puff = np.zeros(n)
    dsp.add_at(puff, 0, dsp.burst(rng, rate, 40, 220, 0.035))
    return tone + 0.35 * puff


def _stone(rng: np.random.Generator, rate: int, n: int) -> np.ndarray:
    scrape = np.zeros(n)
    dsp.add_at(scrape, 0, dsp.burst(rng, rate, 400, 3000, 0.025))
    return 0.25 * scrape + 0.2 * dsp.modes(n, rate, [430, 1120], [0.04, 0.03], [1, 0.6], rng)


def _wood(rng: np.random.Generator, rate: int, n: int) -> np.ndarray:
    knock = dsp.modes(n, rate, [320, 730, 1190, 1900], [0.09, 0.06, 0.045, 0.03], [1, 0.7, 0.4, 0.25], rng)
    rattle = np.zeros(n)
    for delay_s in (0.035, 0.07, 0.1):  # the boards of a fence, one after another
        dsp.add_at(rattle, dsp.seconds(rate, delay_s), dsp.burst(rng, rate, 900, 4000, 0.008))
    return 0.45 * knock + 0.15 * rattle


def _metal(rng: np.random.Generator, rate: int, n: int) -> np.ndarray:
    return 0.3 * dsp.modes(n, rate, [520, 1365, 2410, 3650, 5100], [0.5, 0.4, 0.3, 0.2, 0.15],
                           [1, 0.8, 0.6, 0.4, 0.3], rng)


def _foliage(rng: np.random.Generator, rate: int, n: int) -> np.ndarray:
    leaves = dsp.band(dsp.crackle(rng, n, rate, 2500, 0.8), rate, 1500, 8000)
    return 0.35 * dsp.unit_rms(leaves) * dsp.decay(n, rate, 0.12, attack_s=0.02)


def _water(rng: np.random.Generator, rate: int, n: int) -> np.ndarray:
    splash = dsp.band_noise(rng, n, rate, 500, 5000) * dsp.decay(n, rate, 0.12, attack_s=0.01)
    bubbles = sum(np.sin(dsp.glide(n, rate, f, f * 1.6, 0.012)) * dsp.decay(n, rate, 0.02, delay_s=d)
                  for f, d in zip(rng.uniform(500, 1200, 4), rng.uniform(0.02, 0.2, 4), strict=True))
    return 0.4 * splash + 0.15 * bubbles


def _person(rng: np.random.Generator, rate: int, n: int) -> np.ndarray:
    cloth = np.zeros(n)
    dsp.add_at(cloth, 0, dsp.burst(rng, rate, 800, 4000, 0.05))
    return 0.2 * cloth


def _invisible(rng: np.random.Generator, rate: int, n: int) -> np.ndarray:
    dull = np.zeros(n)
    dsp.add_at(dull, 0, dsp.burst(rng, rate, 250, 900, 0.02))
    return 0.12 * dull


MATERIALS: dict[str, Callable[[np.random.Generator, int, int], np.ndarray]] = {
    "stone": _stone, "wood": _wood, "metal": _metal, "foliage": _foliage, "water": _water, "person": _person,
    "invisible": _invisible,
}


def bump(rng: np.random.Generator, rate: int, material: str) -> np.ndarray:
    """A bump against `material` (one of MATERIALS; anything else sounds of stone), peak about 1."""
    body = thud(rng, rate)
    layer = MATERIALS.get(material, _stone)(rng, rate, len(body))
    return dsp.peak_normalized(dsp.tail_faded(body + layer, rate)).astype(np.float32)
