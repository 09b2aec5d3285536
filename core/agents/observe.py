"""Building Observations from a game: the current frame, and optionally the previous frame and side views."""

from __future__ import annotations

import base64
from dataclasses import dataclass

import cv2
import numpy as np

from core.agents.hearing import AUDIO_MODES, spectrogram_picture
from core.agents.observation import HistoryEntry, Observation
from core.audio.clip import AudioClip
from core.game.connection import GameConnection
from core.game.side_views import SIDE_VIEW_MODES, capture_side_views


@dataclass(frozen=True)
class ObservationOptions:
    previous_frame: bool = False   # temporal feedback
    side_views: bool = False       # spatial expansion: left and right views
    max_width: int = 640           # frames are downscaled to this width for the model
    history_length: int = 8
    # How side views are made: "turn" the camera (costs game time, as in an emulator: comparable with emulator
    # results) or "instant" (the built-in world renders other yaws without advancing; not comparable).
    side_view_mode: str = "turn"
    # What the agent hears of its last step: nothing, the audio itself (models that take audio) or a
    # spectrogram picture (any VLM). docs/observations.md#sound
    audio: str = "none"

    def __post_init__(self) -> None:
        if self.side_view_mode not in SIDE_VIEW_MODES:
            raise ValueError(f"side_view_mode must be one of {SIDE_VIEW_MODES}, got {self.side_view_mode!r}")
        if self.audio not in AUDIO_MODES:
            raise ValueError(f"audio must be one of {', '.join(AUDIO_MODES)}, got {self.audio!r}")

    def to_json(self) -> dict[str, object]:
        return {"previous_frame": self.previous_frame, "side_views": self.side_views,
                "side_view_mode": self.side_view_mode if self.side_views else None,
                "max_width": self.max_width, "history_length": self.history_length, "audio": self.audio}


def resize_for_model(image: np.ndarray, max_width: int) -> np.ndarray:
    h, w = image.shape[:2]
    if w <= max_width:
        return image
    return cv2.resize(image, (max_width, round(h * max_width / w)), interpolation=cv2.INTER_AREA)


def encode_image(image: np.ndarray, fmt: str = "png") -> str:
    """Base64 of a PNG (lossless) or JPEG, as model APIs take images."""
    ok, data = cv2.imencode(f".{fmt}", cv2.cvtColor(image, cv2.COLOR_RGB2BGR))
    if not ok:
        raise ValueError(f"could not encode the image as {fmt}")
    return base64.b64encode(data.tobytes()).decode()


class ObservationBuilder:
    def __init__(self, game: GameConnection, options: ObservationOptions) -> None:
        self.game = game
        self.options = options
        self._previous: np.ndarray | None = None
        self.side_view_seconds = 0.0  # game time the last build's side views cost (turning the camera)

    def reset(self) -> None:
        self._previous = None

    def build(self, step: int, instruction: str, history: list[HistoryEntry],
              last_sound: AudioClip | None = None) -> Observation:
        """`last_sound`: what the previous step played (its ticks' audio), when the run gives the agent sound
        (the runner decides: `--audio clip | spectrogram`, or an agent that listens by itself)."""
        width = self.options.max_width
        frame = resize_for_model(self.game.latest_frame().pixels, width)
        left = right = None
        self.side_view_seconds = 0.0
        if self.options.side_views:
            views = capture_side_views(self.game, self.options.side_view_mode)
            left, right = resize_for_model(views.left.pixels, width), resize_for_model(views.right.pixels, width)
            self.side_view_seconds = views.game_seconds
        previous = self._previous if self.options.previous_frame else None
        self._previous = frame
        recent = tuple(history[-self.options.history_length:]) if self.options.history_length else ()
        hearing = None
        if self.options.audio == "spectrogram" and last_sound is not None:  # drawn once: sent and recorded
            hearing = spectrogram_picture(last_sound, frame.shape[1], frame.shape[0])
        return Observation(step=step, instruction=instruction, frame=frame, previous_frame=previous,
                           left_view=left, right_view=right, history=recent, audio=last_sound,
                           audio_mode=self.options.audio, hearing=hearing)
