"""Voices: babbled syllables, a sound per NPC (pitch and vocal-tract size from its figure), no words.

A syllable is a glottal pulse train (at a pitch that rises or falls) shaped by the formants of a vowel,
after a short consonant noise. Each NPC gets a bank of syllables at start-up; a line of dialogue is babbled
by stringing them together in an order drawn from the world seed and the tick (core/world/sound/mixer.py).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

from core.world.content import Npc
from core.world.sound import dsp
from core.world.sound_spec import Voice

# Formants (Hz) of an adult's vowels: a, e, i, o, u.
VOWELS = [(730, 1090, 2440), (530, 1840, 2480), (300, 2250, 3000), (570, 840, 2410), (320, 870, 2240)]
_WIDTHS = (90.0, 110.0, 170.0)
_WEIGHTS = (1.0, 0.6, 0.3)
TOP_HZ = 4500.0


@dataclass(frozen=True)
class VoiceTraits:
    pitch_hz: float
    formant_scale: float
    syllable_s: float  # how fast it talks
    breath: float  # 0..1: noise in the voice


def traits_for(npc: Npc, override: Voice | None) -> VoiceTraits:
    """From the figure: a taller figure has a lower, darker voice; a skirt or robe shifts it; the id adds a
    fixed personal touch so two similar figures still sound apart."""
    fig = npc.figure
    touch = np.random.default_rng(zlib.crc32(npc.id.encode()))
    pitch = 112.0 * (1.75 / fig.height) ** 2 * (1.7 if fig.lower == "skirt" else 1.0) * touch.uniform(0.88, 1.12)
    scale = (1.75 / fig.height) ** 0.6 * (1.12 if fig.lower == "skirt" else 1.0) / fig.build ** 0.15
    if override is not None:
        pitch = override.pitch_hz or pitch
        scale = override.formant_scale or scale
    return VoiceTraits(float(pitch), float(scale), float(touch.uniform(0.09, 0.15)), float(touch.uniform(0.0, 0.35)))


def syllable(rng: np.random.Generator, rate: int, traits: VoiceTraits, vowel: int | None = None) -> np.ndarray:
    """One babbled syllable, peak about 1: glottal pulses at a gliding pitch through a vowel's formants."""
    duration = traits.syllable_s * rng.uniform(0.75, 1.35)
    n = dsp.seconds(rate, duration)
    t = np.arange(n) / rate
    contour = 1.0 + rng.uniform(-0.12, 0.12) * t / duration + 0.02 * np.sin(2 * np.pi * 5.5 * t)
    f0 = traits.pitch_hz * rng.uniform(0.92, 1.1) * contour
    cycles = np.cumsum(f0) / rate
    pulses = np.diff(np.floor(cycles), prepend=0.0)  # one impulse per glottal cycle
    formants = np.array(VOWELS[vowel if vowel is not None else rng.integers(len(VOWELS))]) * traits.formant_scale
    source = pulses + traits.breath * 0.05 * rng.standard_normal(n)
    spectrum = np.fft.rfft(source)
    freqs = np.fft.rfftfreq(n, 1.0 / rate)
    shape = sum(w / (1 + ((freqs - f) / (bw * traits.formant_scale)) ** 2)
                for f, bw, w in zip(formants, _WIDTHS, _WEIGHTS, strict=True))
    tone = np.fft.irfft(spectrum * shape * (freqs < TOP_HZ), n)
    envelope = np.clip(t / 0.015, 0, 1) * np.clip((duration - t) / 0.04, 0, 1)
    sound = dsp.unit_rms(tone) * envelope
    if rng.random() < 0.6:  # a consonant before the vowel
        consonant_n = dsp.seconds(rate, rng.uniform(0.02, 0.05))
        low = rng.choice([1800.0, 2500.0, 4000.0])
        burst = dsp.band_noise(rng, consonant_n, rate, low, min(low * 2.5, 11000)) * 0.5
        burst *= np.linspace(1.0, 0.2, consonant_n)
        sound = np.concatenate([burst, sound])
    return dsp.peak_normalized(sound)


def syllable_bank(rng: np.random.Generator, rate: int, traits: VoiceTraits, count: int = 10) -> list[np.ndarray]:
    return [syllable(rng, rate, traits, vowel=i % len(VOWELS)).astype(np.float32) for i in range(count)]


def babble(rng: np.random.Generator, bank: list[np.ndarray], rate: int, duration_s: float) -> np.ndarray:
    """Syllables strung into an utterance of about duration_s, with short pauses between words."""
    pieces: list[np.ndarray] = []
    total, target = 0, dsp.seconds(rate, duration_s)
    while total < target:
        piece = bank[int(rng.integers(len(bank)))] * np.float32(rng.uniform(0.7, 1.0))
        gap = np.zeros(dsp.seconds(rate, rng.choice([0.01, 0.02, 0.12])), np.float32)
        pieces += [piece, gap]
        total += len(piece) + len(gap)
    return np.concatenate(pieces) if pieces else np.zeros(0, np.float32)
