"""Short-time spectra: power per band and frame, and a spectrogram in decibels."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_EPS = 1e-12


@dataclass(frozen=True)
class Spectra:
    """Power spectra of consecutive frames: power[frame, bin] for each channel, bins `freqs` in Hz."""

    power: np.ndarray  # (channels, frames, bins)
    freqs: np.ndarray
    hop: int
    window: int
    rate: int

    def times(self) -> np.ndarray:
        """The centre of each frame, in seconds from the first sample."""
        frames = np.arange(int(self.power.shape[1]), dtype=np.float64)
        return (frames * self.hop + self.window / 2) / self.rate

    def band(self, low_hz: float, high_hz: float) -> np.ndarray:
        """Power summed over low_hz..high_hz: (channels, frames)."""
        keep = (self.freqs >= low_hz) & (self.freqs <= high_hz)
        if not keep.any():
            raise ValueError(f"no frequency bin between {low_hz} and {high_hz} Hz at this resolution")
        return self.power[:, :, keep].sum(axis=2)


def as_channels(pcm: np.ndarray) -> np.ndarray:
    """float64 samples in [-1, 1] shaped (channels, frames) from int16 or float PCM (frames, channels) or (frames,)."""
    samples = np.asarray(pcm)
    scale = 32768.0 if samples.dtype == np.int16 else 1.0
    samples = samples.astype(np.float64) / scale
    return samples[None, :] if samples.ndim == 1 else samples.T


def spectra(pcm: np.ndarray, rate: int, window: int = 1024, hop: int = 240) -> Spectra:
    """Hann-windowed power spectra every `hop` samples (default 10 ms at 24 kHz)."""
    channels = as_channels(pcm)
    length = channels.shape[1]
    if length < window:
        channels = np.pad(channels, ((0, 0), (0, window - length)))
        length = window
    count = 1 + (length - window) // hop
    starts = np.arange(count) * hop
    frames = channels[:, starts[:, None] + np.arange(window)[None, :]]  # (channels, frames, window)
    taper = np.hanning(window)
    power = np.abs(np.fft.rfft(frames * taper, axis=2)) ** 2 / (taper ** 2).sum()
    return Spectra(power, np.fft.rfftfreq(window, 1.0 / rate), hop, window, rate)


def spectrogram_db(pcm: np.ndarray, rate: int, window: int = 1024, hop: int = 240) -> tuple[np.ndarray, np.ndarray,
                                                                                            np.ndarray]:
    """(dB[bin, frame] of the channels' mean power, frame times in s, bin frequencies in Hz), for pictures."""
    spec = spectra(pcm, rate, window, hop)
    return 10 * np.log10(spec.power.mean(axis=0).T + _EPS), spec.times(), spec.freqs


def to_db(power: np.ndarray) -> np.ndarray:
    return 10 * np.log10(np.asarray(power) + _EPS)
