"""The ground: a height grid built from the world file, and the walkable decks on top of it.

Physics and rendering use the same grid, so the character stands exactly on the
triangles the camera sees.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from core.world.content import WorldSpec


def polyline_distance_grid(xs: np.ndarray, ys: np.ndarray, points: list[tuple[float, float]]) -> np.ndarray:
    """Distance from every grid point to a polyline, vectorised per segment."""
    best = np.full(xs.shape, np.inf)
    for (ax, ay), (bx, by) in itertools.pairwise(points):
        dx, dy = bx - ax, by - ay
        length_sq = dx * dx + dy * dy or 1e-12
        t = np.clip(((xs - ax) * dx + (ys - ay) * dy) / length_sq, 0.0, 1.0)
        best = np.minimum(best, np.hypot(xs - (ax + t * dx), ys - (ay + t * dy)))
    return best


@dataclass(frozen=True)
class Deck:
    """A flat walkable surface above the terrain (bridge, pier), as a rotated rectangle."""

    cx: float
    cy: float
    half_length: float
    half_width: float
    angle_deg: float
    z: float

    def contains(self, x: float, y: float, margin: float = 0.0) -> bool:
        rad = math.radians(self.angle_deg)
        c, s = math.cos(rad), math.sin(rad)
        lx = (x - self.cx) * c + (y - self.cy) * s
        ly = -(x - self.cx) * s + (y - self.cy) * c
        return abs(lx) <= self.half_length + margin and abs(ly) <= self.half_width + margin


class Terrain:
    def __init__(self, spec: WorldSpec) -> None:
        terrain = spec.terrain
        self.extent = terrain.extent
        self.spacing = terrain.spacing
        self.count = round(2 * self.extent / self.spacing) + 1
        axis = np.linspace(-self.extent, self.extent, self.count)
        self.xs, self.ys = np.meshgrid(axis, axis)  # heights[row=y, col=x]
        self.heights = self._build_heights(spec)
        self.decks: list[Deck] = []

    def _build_heights(self, spec: WorldSpec) -> np.ndarray:
        xs, ys = self.xs, self.ys
        heights = np.zeros_like(xs)
        for hill in spec.terrain.hills:
            d = np.hypot(xs - hill.center[0], ys - hill.center[1]) / hill.radius
            heights += hill.height * np.where(d < 1.0, 0.5 * (1 + np.cos(np.pi * np.minimum(d, 1.0))), 0.0)
        if spec.stream is not None:
            stream = spec.stream
            dist = polyline_distance_grid(xs, ys, stream.points)
            half = stream.width / 2
            t = np.clip((dist - half) / max(stream.bank_width, 1e-6), 0.0, 1.0)
            smooth = t * t * (3 - 2 * t)
            carved = -stream.depth * (1.0 - smooth) + heights * smooth
            heights = np.where(dist < half + stream.bank_width, np.minimum(heights, carved), heights)
        if spec.sea is not None:
            beyond = xs - spec.sea.shore_x
            heights = np.where(beyond > 0, np.minimum(heights, -0.3 - 0.25 * beyond), heights)
        return heights

    def terrain_height(self, x: float, y: float) -> float:
        """Bilinear height of the rendered ground triangles' grid at (x, y)."""
        fx = (min(max(x, -self.extent), self.extent) + self.extent) / self.spacing
        fy = (min(max(y, -self.extent), self.extent) + self.extent) / self.spacing
        col = min(int(fx), self.count - 2)
        row = min(int(fy), self.count - 2)
        tx, ty = fx - col, fy - row
        h = self.heights
        top = h[row, col] * (1 - tx) + h[row, col + 1] * tx
        bottom = h[row + 1, col] * (1 - tx) + h[row + 1, col + 1] * tx
        return float(top * (1 - ty) + bottom * ty)

    def ground_height(self, x: float, y: float) -> float:
        """Where a character standing at (x, y) has its feet: on a deck if above one."""
        base = self.terrain_height(x, y)
        for deck in self.decks:
            if deck.contains(x, y):
                base = max(base, deck.z)
        return base

    def on_deck(self, x: float, y: float) -> bool:
        return any(deck.contains(x, y) for deck in self.decks)
