"""Generated textures (numpy RGB images, top row first): ground, roads, facades, signs, clock faces.

Text is rasterised with OpenCV into the texture itself because Panda3D's software
renderer draws TextNode glyphs almost invisibly (FACTS.md).
"""

from __future__ import annotations

import math

import cv2
import numpy as np


def _noise(size: int, seed: int, octaves: int = 4) -> np.ndarray:
    """Tileable value noise in [0, 1]."""
    rng = np.random.default_rng(seed)
    out = np.zeros((size, size), np.float32)
    amplitude, total = 1.0, 0.0
    for octave in range(octaves):
        cells = 4 * 2**octave
        grid = rng.random((cells, cells)).astype(np.float32)
        tiled = np.tile(grid, (2, 2))
        layer = cv2.resize(tiled, (size * 2, size * 2), interpolation=cv2.INTER_CUBIC)[size // 2: size // 2 + size,
                                                                                          size // 2: size // 2 + size]
        out += layer * amplitude
        total += amplitude
        amplitude *= 0.5
    out /= total
    return np.clip((out - out.min()) / max(float(out.max() - out.min()), 1e-6), 0, 1)


def grass(size: int = 128) -> np.ndarray:
    n = _noise(size, 1)
    speckle = np.random.default_rng(2).random((size, size)).astype(np.float32)
    value = 0.78 + 0.16 * n + 0.06 * (speckle > 0.8)
    return _grey(value)


def asphalt(size: int = 128) -> np.ndarray:
    value = 0.82 + 0.1 * _noise(size, 3) + 0.08 * np.random.default_rng(4).random((size, size))
    return _grey(value)


def cobble(size: int = 128) -> np.ndarray:
    img = np.full((size, size), 0.62, np.float32)
    stones = 8
    cell = size // stones
    rng = np.random.default_rng(5)
    for row in range(stones):
        offset = (cell // 2) * (row % 2)
        for col in range(stones + 1):
            x0 = col * cell - offset + 2
            y0 = row * cell + 2
            shade = float(rng.uniform(0.82, 1.0))
            cv2.rectangle(img, (x0, y0), (x0 + cell - 4, y0 + cell - 4), shade, thickness=-1)
    img = cv2.GaussianBlur(img, (3, 3), 0)
    return _grey(img)


def dirt(size: int = 128) -> np.ndarray:
    value = 0.8 + 0.15 * _noise(size, 6) + 0.05 * np.random.default_rng(7).random((size, size))
    return _grey(value)


def wood(size: int = 128) -> np.ndarray:
    rows = np.arange(size, dtype=np.float32)[:, None]
    grain = 0.85 + 0.1 * np.sin(rows / 3.0 + 4 * _noise(size, 8))
    grain[:: size // 8] = 0.6  # plank seams
    return _grey(grain)


def facade(size: int = 128) -> np.ndarray:
    """One bay of a wall, 3 m by 3 m: plaster with a window (tiles across the wall)."""
    img = np.ones((size, size, 3), np.float32) * (0.92 + 0.06 * _noise(size, 9))[..., None]
    x0, x1 = int(size * 0.28), int(size * 0.72)
    y0, y1 = int(size * 0.22), int(size * 0.62)
    cv2.rectangle(img, (x0 - 4, y0 - 4), (x1 + 4, y1 + 6), (0.55, 0.55, 0.55), -1)
    cv2.rectangle(img, (x0, y0), (x1, y1), (0.32, 0.42, 0.55), -1)
    cv2.line(img, ((x0 + x1) // 2, y0), ((x0 + x1) // 2, y1), (0.85, 0.85, 0.85), 3)
    cv2.line(img, (x0, (y0 + y1) // 2), (x1, (y0 + y1) // 2), (0.85, 0.85, 0.85), 3)
    return (np.clip(img, 0, 1) * 255).astype(np.uint8)


def plain(size: int = 8) -> np.ndarray:
    return np.full((size, size, 3), 255, np.uint8)


def sign(text: str, background: tuple[float, float, float], foreground: tuple[float, float, float],
         width: int = 512, height: int = 128) -> np.ndarray:
    """A signboard with large, bold, centred lettering and a light border."""
    img = np.zeros((height, width, 3), np.uint8)
    img[:] = [int(c * 255) for c in background]
    cv2.rectangle(img, (4, 4), (width - 5, height - 5), (235, 225, 200), 6)
    font = cv2.FONT_HERSHEY_DUPLEX
    thickness = 5
    scale = 4.0
    while scale > 0.5:
        (tw, th), _ = cv2.getTextSize(text, font, scale, thickness)
        if tw <= width - 40 and th <= height - 44:
            break
        scale -= 0.1
    (tw, th), _ = cv2.getTextSize(text, font, scale, thickness)
    origin = ((width - tw) // 2, (height + th) // 2)
    color = tuple(int(c * 255) for c in foreground)
    cv2.putText(img, text, origin, font, scale, color, thickness, cv2.LINE_AA)
    return img


def clock_face(size: int = 128, hour: float = 10.1) -> np.ndarray:
    img = np.full((size, size, 3), (70, 60, 50), np.uint8)
    center, radius = (size // 2, size // 2), size // 2 - 6
    cv2.circle(img, center, radius, (245, 240, 225), -1, cv2.LINE_AA)
    cv2.circle(img, center, radius, (30, 30, 30), 4, cv2.LINE_AA)
    for mark in range(12):
        angle = math.radians(mark * 30)
        outer = (int(center[0] + math.sin(angle) * (radius - 4)), int(center[1] - math.cos(angle) * (radius - 4)))
        inner = (int(center[0] + math.sin(angle) * (radius - 16)), int(center[1] - math.cos(angle) * (radius - 16)))
        cv2.line(img, inner, outer, (30, 30, 30), 4, cv2.LINE_AA)
    for fraction, length, width in ((hour / 12.0, 0.5, 7), ((hour % 1.0), 0.8, 4)):
        angle = fraction * 2 * math.pi
        tip = (int(center[0] + math.sin(angle) * radius * length), int(center[1] - math.cos(angle) * radius * length))
        cv2.line(img, center, tip, (20, 20, 20), width, cv2.LINE_AA)
    return img


def _grey(value: np.ndarray) -> np.ndarray:
    return (np.clip(np.repeat(value[..., None], 3, axis=2), 0, 1) * 255).astype(np.uint8)


NAMED = {
    "plain": plain,
    "grass": grass,
    "asphalt": asphalt,
    "cobble": cobble,
    "dirt": dirt,
    "wood": wood,
    "facade": facade,
    "clock": clock_face,
}
