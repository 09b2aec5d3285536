"""2-D collision for a round character: move, then push out of every obstacle it overlaps.

Pushing out along each overlap's normal is what makes the character slide along walls
instead of sticking to them. The maths is plain Python floats in a fixed order, so the
same inputs always give bit-identical positions (lockstep determinism).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

_CELL = 8.0
_ITERATIONS = 4


@dataclass(frozen=True)
class Obstacle:
    """A rotated rectangle (half_x, half_y > 0) or a circle (radius > 0) in the ground plane."""

    name: str
    cx: float
    cy: float
    half_x: float = 0.0
    half_y: float = 0.0
    angle_deg: float = 0.0
    radius: float = 0.0
    kind: Literal["solid", "water"] = "solid"
    open_flag: int | None = None  # bit index; the obstacle vanishes once that flag is set
    material: str = "stone"  # what a bump against it sounds of (core/world/sound/banks_bumps.py)

    @property
    def is_circle(self) -> bool:
        return self.radius > 0.0

    def bounds(self) -> tuple[float, float, float, float]:
        r = self.radius if self.is_circle else math.hypot(self.half_x, self.half_y)
        return self.cx - r, self.cy - r, self.cx + r, self.cy + r

    def push_out(self, x: float, y: float, radius: float) -> tuple[float, float] | None:
        """The smallest move that separates a circle at (x, y) from this obstacle, if they overlap."""
        if self.is_circle:
            dx, dy = x - self.cx, y - self.cy
            dist = math.hypot(dx, dy)
            depth = self.radius + radius - dist
            if depth <= 0.0:
                return None
            if dist < 1e-9:
                return depth, 0.0
            return dx / dist * depth, dy / dist * depth
        rad = math.radians(self.angle_deg)
        c, s = math.cos(rad), math.sin(rad)
        lx = (x - self.cx) * c + (y - self.cy) * s
        ly = -(x - self.cx) * s + (y - self.cy) * c
        qx = max(-self.half_x, min(self.half_x, lx))
        qy = max(-self.half_y, min(self.half_y, ly))
        dx, dy = lx - qx, ly - qy
        dist = math.hypot(dx, dy)
        if dist >= radius:
            return None
        if dist > 1e-9:
            depth = radius - dist
            px, py = dx / dist * depth, dy / dist * depth
        else:  # centre inside the rectangle: leave through the nearest side
            exit_x = self.half_x - abs(lx)
            exit_y = self.half_y - abs(ly)
            if exit_x < exit_y:
                px, py = math.copysign(exit_x + radius, lx or 1.0), 0.0
            else:
                px, py = 0.0, math.copysign(exit_y + radius, ly or 1.0)
        return px * c - py * s, px * s + py * c


@dataclass(frozen=True)
class Slide:
    """Where a move ended, and how hard the obstacles pushed back: the sum of every push-out on the way
    (it points away from what was hit) and the material of the one that pushed hardest."""

    x: float
    y: float
    push_x: float = 0.0
    push_y: float = 0.0
    material: str = ""


class CollisionWorld:
    def __init__(self, obstacles: Iterable[Obstacle]) -> None:
        self.obstacles = list(obstacles)
        self._grid: dict[tuple[int, int], list[int]] = defaultdict(list)
        for index, obstacle in enumerate(self.obstacles):
            x0, y0, x1, y1 = obstacle.bounds()
            for gx in range(math.floor(x0 / _CELL), math.floor(x1 / _CELL) + 1):
                for gy in range(math.floor(y0 / _CELL), math.floor(y1 / _CELL) + 1):
                    self._grid[(gx, gy)].append(index)

    def nearby(self, x: float, y: float, reach: float) -> list[Obstacle]:
        found: set[int] = set()
        for gx in range(math.floor((x - reach) / _CELL), math.floor((x + reach) / _CELL) + 1):
            for gy in range(math.floor((y - reach) / _CELL), math.floor((y + reach) / _CELL) + 1):
                found.update(self._grid.get((gx, gy), ()))
        return [self.obstacles[i] for i in sorted(found)]

    def move(
        self,
        x: float,
        y: float,
        dx: float,
        dy: float,
        radius: float,
        flags: int,
        on_deck: Callable[[float, float], bool],
    ) -> tuple[float, float]:
        """Move a circle by (dx, dy), sliding along whatever it hits."""
        slide = self.slide(x, y, dx, dy, radius, flags, on_deck)
        return slide.x, slide.y

    def slide(
        self,
        x: float,
        y: float,
        dx: float,
        dy: float,
        radius: float,
        flags: int,
        on_deck: Callable[[float, float], bool],
    ) -> Slide:
        """`move`, also telling how hard and against what the character pressed (for the bump it hears)."""
        steps = max(1, math.ceil(math.hypot(dx, dy) / (radius * 0.5)))
        push_x = push_y = strongest = 0.0
        material = ""
        for _ in range(steps):
            x += dx / steps
            y += dy / steps
            candidates = self.nearby(x, y, radius + 1.0)
            for _ in range(_ITERATIONS):
                moved = False
                deck = on_deck(x, y)
                for obstacle in candidates:
                    if obstacle.open_flag is not None and flags >> obstacle.open_flag & 1:
                        continue
                    if obstacle.kind == "water" and deck:
                        continue
                    push = obstacle.push_out(x, y, radius)
                    if push is not None:
                        x += push[0]
                        y += push[1]
                        push_x += push[0]
                        push_y += push[1]
                        size = abs(push[0]) + abs(push[1])
                        if size > strongest:
                            strongest, material = size, obstacle.material
                        moved = True
                if not moved:
                    break
        return Slide(x, y, push_x, push_y, material)
