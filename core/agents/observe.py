"""Building Observations from a game: the current frame, and optionally the previous frame and side views."""

from __future__ import annotations

import base64
from dataclasses import dataclass

import cv2
import numpy as np

from core.agents.observation import HistoryEntry, Observation
from core.game.connection import GameConnection


@dataclass(frozen=True)
class ObservationOptions:
    previous_frame: bool = False   # temporal feedback
    side_views: bool = False       # spatial expansion: left and right views
    max_width: int = 640           # frames are downscaled to this width for the model
    history_length: int = 8

    def to_json(self) -> dict[str, object]:
        return {"previous_frame": self.previous_frame, "side_views": self.side_views,
                "max_width": self.max_width, "history_length": self.history_length}


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

    def reset(self) -> None:
        self._previous = None

    def build(self, step: int, instruction: str, history: list[HistoryEntry]) -> Observation:
        width = self.options.max_width
        frame = resize_for_model(self.game.latest_frame().pixels, width)
        left = right = None
        if self.options.side_views:
            left_frame, right_frame = self.game.extra_views([-90.0, 90.0])
            left, right = resize_for_model(left_frame.pixels, width), resize_for_model(right_frame.pixels, width)
        previous = self._previous if self.options.previous_frame else None
        self._previous = frame
        recent = tuple(history[-self.options.history_length:]) if self.options.history_length else ()
        return Observation(step=step, instruction=instruction, frame=frame, previous_frame=previous,
                           left_view=left, right_view=right, history=recent)
