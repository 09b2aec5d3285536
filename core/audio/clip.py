"""AudioClip: some of a game's sound, as the harness reads it, records it and plays it."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class AudioClip(NamedTuple):
    """The sound of some ticks: samples per second and int16 PCM shaped (frames, channels)."""

    rate: int
    samples: np.ndarray

    @property
    def seconds(self) -> float:
        return len(self.samples) / self.rate if self.rate else 0.0
