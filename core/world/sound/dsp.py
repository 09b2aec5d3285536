"""Building blocks for the world's sounds, numpy only: filtered noise, crackle, resonant modes, envelopes.

Everything takes an explicit numpy Generator, never the global one, so that a world seed gives the same
sounds on every run (lockstep: same inputs, bit-identical audio).
"""

from __future__ import annotations

import numpy as np

Array = np.ndarray


def seconds(rate: int, duration_s: float) -> int:
    return max(1, round(rate * duration_s))


def fast_length(n: int) -> int:
    """The smallest length >= n with no prime factor above 5 (the FFT is quick on those)."""
    best = 1 << max(0, (n - 1).bit_length())
    five = 1
    while five < best:
        three = five
        while three < best:
            length = three * (1 << max(0, (-(-n // three) - 1).bit_length()))
            best = min(best, length)
            three *= 3
        five *= 5
    return best


def band(signal: Array, rate: int, low_hz: float, high_hz: float, edge: float = 0.15, tilt_db: float = 0.0) -> Array:
    """Band-pass by FFT with soft (raised-cosine) edges `edge` octaves wide, zero phase; `tilt_db` per octave
    above low_hz (negative: darker towards the top, as most real sounds are)."""
    n = len(signal)
    size = fast_length(n)
    spectrum = np.fft.rfft(signal, size)
    freqs = np.fft.rfftfreq(size, 1.0 / rate)
    with np.errstate(divide="ignore"):
        octaves = np.log2(np.maximum(freqs, 1e-3))
    rise = np.clip((octaves - np.log2(max(low_hz, 1e-3)) + edge) / (2 * edge), 0.0, 1.0)
    fall = np.clip((np.log2(high_hz) + edge - octaves) / (2 * edge), 0.0, 1.0)
    shape = np.sin(0.5 * np.pi * rise) ** 2 * np.sin(0.5 * np.pi * fall) ** 2
    if tilt_db:
        shape = shape * 10 ** (tilt_db * np.maximum(octaves - np.log2(max(low_hz, 1e-3)), 0.0) / 20)
    return np.fft.irfft(spectrum * shape, size)[:n]


def band_noise(rng: np.random.Generator, n: int, rate: int, low_hz: float, high_hz: float) -> Array:
    """Noise limited to low..high Hz, at unit RMS."""
    return unit_rms(band(rng.standard_normal(n), rate, low_hz, high_hz))


def burst(rng: np.random.Generator, rate: int, low_hz: float, high_hz: float, decay_s: float) -> Array:
    """A short click or puff: band-limited noise under a quick decay, only as long as it is audible."""
    n = seconds(rate, decay_s * 7 + 0.002)
    return band_noise(rng, n, rate, low_hz, high_hz) * decay(n, rate, decay_s, attack_s=0.001)


def crackle(rng: np.random.Generator, n: int, rate: int, per_second: float, grain_ms: float = 1.2) -> Array:
    """Random clicks (leaves, grit, droplets): sparse impulses of random size, each a short decay."""
    count = rng.poisson(per_second * n / rate)
    impulses = np.zeros(n)
    impulses[rng.integers(0, n, count)] = rng.standard_normal(count) * rng.uniform(0.3, 1.0, count)
    kernel = np.exp(-np.arange(seconds(rate, grain_ms * 5e-3)) / (rate * grain_ms * 1e-3))
    return unit_rms(np.convolve(impulses, kernel)[:n])


def decay(n: int, rate: int, decay_s: float, attack_s: float = 0.002, delay_s: float = 0.0) -> Array:
    """An envelope: silence for delay_s, a raised-cosine attack, then an exponential decay."""
    t = np.arange(n) / rate - delay_s
    attack = np.clip(t / max(attack_s, 1e-6), 0.0, 1.0)
    return np.where(t < 0, 0.0, np.sin(0.5 * np.pi * attack) ** 2 * np.exp(-np.maximum(t, 0.0) / decay_s))


def modes(n: int, rate: int, freqs: list[float], decays_s: list[float], amps: list[float],
          rng: np.random.Generator | None = None, attack_s: float = 0.001) -> Array:
    """Struck resonances: decaying sines (wood, metal, a bell's partials), random phases if rng is given."""
    t = np.arange(n) / rate
    out = np.zeros(n)
    for freq, decay_s, amp in zip(freqs, decays_s, amps, strict=True):
        phase = rng.uniform(0, 2 * np.pi) if rng is not None else 0.0
        out += amp * np.sin(2 * np.pi * freq * t + phase) * decay(n, rate, decay_s, attack_s)
    return out


def glide(n: int, rate: int, start_hz: float, end_hz: float, tau_s: float) -> Array:
    """The phase of a tone sliding exponentially from start_hz to end_hz (time constant tau_s)."""
    t = np.arange(n) / rate
    freq = end_hz + (start_hz - end_hz) * np.exp(-t / tau_s)
    return 2 * np.pi * np.cumsum(freq) / rate


def unit_rms(signal: Array) -> Array:
    rms = float(np.sqrt(np.mean(signal ** 2)))
    return signal / rms if rms > 0 else signal


def peak_normalized(signal: Array, peak: float = 1.0) -> Array:
    top = float(np.max(np.abs(signal)))
    return signal * (peak / top) if top > 0 else signal


def smooth_random(rng: np.random.Generator, n: int, rate: int, hz: float) -> Array:
    """A slowly wandering value around 0 (about unit size) that changes about `hz` times a second."""
    knots = rng.standard_normal(int(n * hz / rate) + 3)
    return np.interp(np.arange(n) * hz / rate, np.arange(len(knots)), knots)


def looped(signal: Array, rate: int, fade_s: float = 0.25) -> Array:
    """Make the end run into the start without a seam: the tail is crossfaded into the head."""
    fade = seconds(rate, fade_s)
    body = signal[:-fade].copy()
    ramp = np.sin(0.5 * np.pi * np.arange(fade) / fade) ** 2
    body[:fade] = body[:fade] * ramp + signal[-fade:] * (1 - ramp)
    return body


def tail_faded(signal: Array, rate: int, fade_s: float = 0.02) -> Array:
    """The signal with its last fade_s faded to silence, so that a one-shot never ends with a click."""
    out = signal.copy()
    fade = min(len(out), seconds(rate, fade_s))
    out[-fade:] *= np.cos(0.5 * np.pi * np.arange(1, fade + 1) / fade) ** 2
    return out


def add_at(target: Array, start: int, sound: Array) -> None:
    """Add `sound` into `target` from `start`, cut at target's end."""
    end = min(len(target), start + len(sound))
    if end > start:
        target[start:end] += sound[:end - start]
