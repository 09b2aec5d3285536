"""Observation: everything an agent is given at a step, and nothing else.

It holds images, the instruction text for the chosen granularity, and the agent's own history.
There is deliberately no field for coordinates, flags, map ids or any other evaluator output.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

import numpy as np

from core.audio.clip import AudioClip

OBSERVATION_FORMAT_VERSION = 1


@dataclass(frozen=True)
class HistoryEntry:
    """One earlier step, as the agent itself saw and decided it."""

    step: int
    action: str
    thought: str = ""
    self_assessment: str = ""
    feedback: str = ""  # text the harness chose to show the agent (a hint), never ground truth


@dataclass(frozen=True)
class Observation:
    step: int
    instruction: str
    frame: np.ndarray                      # current frame, RGB uint8 (H, W, 3)
    previous_frame: np.ndarray | None = None
    left_view: np.ndarray | None = None
    right_view: np.ndarray | None = None
    history: tuple[HistoryEntry, ...] = field(default_factory=tuple)
    # The sound of the agent's last step (the signal a player heard, never an event list), when the run gives
    # sound (`--audio clip | spectrogram`); None on the first step. audio_mode says how it is to be given.
    audio: AudioClip | None = None
    audio_mode: str = "none"
    hearing: np.ndarray | None = None  # `spectrogram`: the picture of `audio` the model is shown (frame-sized)

    def __post_init__(self) -> None:
        for name in ("frame", "previous_frame", "left_view", "right_view", "hearing"):
            image = getattr(self, name)
            if image is None:
                continue
            array = cast("np.ndarray", image) if isinstance(image, np.ndarray) else None
            if array is None or array.dtype != np.uint8 or array.ndim != 3 or array.shape[2] != 3:
                raise TypeError(f"Observation.{name} must be an RGB uint8 image (H, W, 3)")
