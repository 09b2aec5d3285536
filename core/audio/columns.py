"""Spectrogram columns as sound arrives: a scrolling picture's next columns, and the level of each ear.

`ColumnMaker` turns PCM chunks of any length into columns of a stereo spectrogram (one per `hop` samples,
each channel on its own), keeping the samples a window still needs between calls, so a stream cut anywhere
gives the same columns as the whole clip at once. Values are levels 0..255 on a fixed decibel scale (no
automatic gain: a quiet moment looks quiet), rows on a logarithmic frequency axis from `low_hz` (bottom,
row 0) to `high_hz`, each row the strongest bin it covers, as core/audio/picture.py draws them. Numpy only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FLOOR_DB = -100.0   # power spectral level shown black (dB full scale, per bin)
CEILING_DB = -15.0  # and shown brightest
LEVEL_FLOOR_DB = -90.0  # a level meter's bottom (dB full scale, RMS)
_EPS = 1e-12


@dataclass(frozen=True)
class Levels:
    """RMS and peak of each channel over a stretch of sound, in dB full scale (LEVEL_FLOOR_DB for silence)."""

    rms_db: tuple[float, ...]
    peak_db: tuple[float, ...]


def levels(pcm: np.ndarray) -> Levels:
    """Levels of int16 PCM shaped (frames, channels)."""
    if len(pcm) == 0:
        channels = pcm.shape[1] if pcm.ndim == 2 else 1
        return Levels((LEVEL_FLOOR_DB,) * channels, (LEVEL_FLOOR_DB,) * channels)
    samples = pcm.astype(np.float64).reshape(len(pcm), -1) / 32768.0
    rms = 10 * np.log10(np.mean(samples ** 2, axis=0) + _EPS)
    peak = 20 * np.log10(np.abs(samples).max(axis=0) + _EPS)
    return Levels(tuple(float(max(LEVEL_FLOOR_DB, v)) for v in rms), tuple(float(max(LEVEL_FLOOR_DB, v)) for v in peak))


class ColumnMaker:
    """Spectrogram columns of a stream of PCM (frames, channels): `feed(pcm)` returns the columns completed by
    that chunk as uint8 shaped (channels, rows, columns)."""

    def __init__(self, rate: int, channels: int, rows: int = 80, low_hz: float = 40.0, high_hz: float = 10_000.0,
                 window: int = 512, hop: int = 240) -> None:
        self.rate, self.channels, self.rows, self.window, self.hop = rate, channels, rows, window, hop
        self._taper = np.hanning(window)
        self._norm = float((self._taper ** 2).sum())
        freqs = np.fft.rfftfreq(window, 1.0 / rate)
        high = min(high_hz, rate / 2)
        centres = np.geomspace(low_hz, high, rows)
        edges = np.concatenate([[centres[0]], np.sqrt(centres[1:] * centres[:-1]), [centres[-1]]])
        # For each row, the bins it covers; a row narrower than a bin takes the nearest bin.
        self._row_bins: list[np.ndarray] = []
        for row in range(rows):
            inside = np.flatnonzero((freqs >= edges[row]) & (freqs <= edges[row + 1]))
            self._row_bins.append(inside if len(inside) else np.array([int(np.argmin(np.abs(freqs - centres[row])))]))
        self._first = np.array([b[0] for b in self._row_bins])
        self._last = np.array([b[-1] for b in self._row_bins])
        self.row_hz = centres
        self._held = np.zeros((0, channels), np.float64)  # samples not yet fully used by a window

    @property
    def columns_per_second(self) -> float:
        return self.rate / self.hop

    def reset(self) -> None:
        """Forget the samples held: the next chunk does not follow the last (a reset, another recording)."""
        self._held = np.zeros((0, self.channels), np.float64)

    def feed(self, pcm: np.ndarray) -> np.ndarray:
        samples = pcm.astype(np.float64).reshape(len(pcm), -1)[:, :self.channels] / 32768.0
        held = np.concatenate([self._held, samples]) if len(self._held) else samples
        count = 0 if len(held) < self.window else 1 + (len(held) - self.window) // self.hop
        if count == 0:
            self._held = held
            return np.zeros((self.channels, self.rows, 0), np.uint8)
        starts = np.arange(count) * self.hop
        frames = held[starts[:, None] + np.arange(self.window)[None, :]]  # (columns, window, channels)
        power = np.abs(np.fft.rfft(frames * self._taper[None, :, None], axis=1)) ** 2 / self._norm
        self._held = held[count * self.hop:]
        return self._to_levels(power)

    def _to_levels(self, power: np.ndarray) -> np.ndarray:
        """(columns, bins, channels) power to (channels, rows, columns) uint8 levels: the strongest bin per row."""
        # the maximum over each row's bins: reduceat runs from a row's first bin to the next row's first
        peaks = np.maximum.reduceat(power[:, :self._last[-1] + 1], self._first, axis=1)  # (columns, rows, channels)
        # reduceat runs to the next start; rows sharing a bin (narrow rows at the bottom) read their own bin only
        single = self._first == self._last
        peaks[:, single, :] = power[:, self._first[single], :]
        db = 10 * np.log10(peaks + _EPS)
        scaled = (db - FLOOR_DB) * (255.0 / (CEILING_DB - FLOOR_DB))
        return np.clip(scaled, 0, 255).astype(np.uint8).transpose(2, 1, 0)

    def whole(self, pcm: np.ndarray) -> np.ndarray:
        """The columns of a clip on its own (the stream's state is left as it was)."""
        held = self._held
        self.reset()
        try:
            return self.feed(pcm)
        finally:
            self._held = held
