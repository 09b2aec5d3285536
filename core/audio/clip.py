"""AudioClip: some of a game's sound, as the harness reads it, records it and plays it; AudioLayout: its format."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np


class AudioClip(NamedTuple):
    """The sound of some ticks: samples per second and int16 PCM shaped (frames, channels)."""

    rate: int
    samples: np.ndarray

    @property
    def seconds(self) -> float:
        return len(self.samples) / self.rate if self.rate else 0.0


@dataclass(frozen=True)
class AudioLayout:
    """How a recording's sound is stored: samples per second and channels (interleaved int16; 2 = left, right)."""

    rate: int
    channels: int

    @property
    def channel_names(self) -> tuple[str, ...]:
        return ("L", "R") if self.channels == 2 else tuple(f"ch{i + 1}" for i in range(self.channels))
