"""The 2-D layer drawn into each frame: the dialogue box and the interaction prompt.

Drawn with OpenCV onto the read-back frame, so the text is crisp at every resolution
and the software renderer's weak glyph rendering never matters.
"""

from __future__ import annotations

import textwrap

import cv2
import numpy as np

_FONT = cv2.FONT_HERSHEY_DUPLEX


def _blend_rect(frame: np.ndarray, x0: int, y0: int, x1: int, y1: int, color: tuple[int, int, int],
                alpha: float) -> None:
    region = frame[y0:y1, x0:x1]
    region[:] = (region.astype(np.float32) * (1 - alpha) + np.array(color, np.float32) * alpha).astype(np.uint8)


def draw_dialogue(frame: np.ndarray, speaker: str, line: str) -> None:
    h, w = frame.shape[:2]
    unit = h / 360.0
    margin = int(16 * unit)
    box_h = int(96 * unit)
    x0, y0, x1, y1 = margin, h - margin - box_h, w - margin, h - margin
    _blend_rect(frame, x0, y0, x1, y1, (18, 24, 38), 0.82)
    cv2.rectangle(frame, (x0, y0), (x1, y1), (235, 235, 245), max(1, int(2 * unit)), cv2.LINE_AA)
    scale = 0.55 * unit
    thickness = max(1, round(1.2 * unit))
    (name_w, name_h), _ = cv2.getTextSize(speaker, _FONT, scale, thickness)
    tab_y0 = y0 - name_h - int(12 * unit)
    _blend_rect(frame, x0 + int(10 * unit), max(tab_y0, 0), x0 + int(22 * unit) + name_w, y0, (60, 90, 170), 0.95)
    cv2.putText(frame, speaker, (x0 + int(16 * unit), y0 - int(6 * unit)), _FONT, scale, (255, 255, 255), thickness,
                cv2.LINE_AA)
    char_w = cv2.getTextSize("M", _FONT, scale, thickness)[0][0] * 0.78
    wrap = max(10, int((x1 - x0 - 30 * unit) / char_w))
    for i, text in enumerate(textwrap.wrap(line, wrap)[:3]):
        y = y0 + int((28 + 24 * i) * unit)
        cv2.putText(frame, text, (x0 + int(14 * unit), y), _FONT, scale, (250, 250, 250), thickness, cv2.LINE_AA)
    cx, cy = x1 - int(22 * unit), y1 - int(14 * unit)
    size = int(6 * unit)
    triangle = np.array([[cx - size, cy - size], [cx + size, cy - size], [cx, cy + size // 2]], np.int32)
    cv2.fillConvexPoly(frame, triangle, (250, 210, 80), cv2.LINE_AA)


def draw_prompt(frame: np.ndarray, label: str) -> None:
    """A small "(A) label" bubble, as games show near something you can interact with."""
    h, w = frame.shape[:2]
    unit = h / 360.0
    scale = 0.5 * unit
    thickness = max(1, round(1.1 * unit))
    (tw, th), _ = cv2.getTextSize(label, _FONT, scale, thickness)
    radius = int(10 * unit)
    pad = int(8 * unit)
    x0 = (w - tw - 2 * radius - 3 * pad) // 2
    y1 = h - int(24 * unit)
    y0 = y1 - th - 2 * pad
    _blend_rect(frame, x0, y0, x0 + tw + 2 * radius + 3 * pad, y1, (20, 20, 28), 0.7)
    center = (x0 + pad + radius, (y0 + y1) // 2)
    cv2.circle(frame, center, radius, (80, 200, 120), -1, cv2.LINE_AA)
    cv2.putText(frame, "A", (center[0] - int(5 * unit), center[1] + int(5 * unit)), _FONT, scale * 0.9,
                (255, 255, 255), thickness, cv2.LINE_AA)
    cv2.putText(frame, label, (x0 + 2 * pad + 2 * radius, y1 - pad), _FONT, scale, (255, 255, 255), thickness,
                cv2.LINE_AA)
