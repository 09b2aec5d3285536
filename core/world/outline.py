"""The world's footprints seen from above (buildings, walls, water), for the studio's map backdrop.

Only large solid rectangles and water are kept: props such as lamps and trees would clutter the
plot without helping anyone read a trajectory.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from core.world.collision import Obstacle

MIN_FOOTPRINT_M2 = 6.0


def _corners(obstacle: Obstacle) -> list[list[float]]:
    cos, sin = math.cos(math.radians(obstacle.angle_deg)), math.sin(math.radians(obstacle.angle_deg))
    corners: list[list[float]] = []
    for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
        dx, dy = sx * obstacle.half_x, sy * obstacle.half_y
        corners.append([round(obstacle.cx + dx * cos - dy * sin, 2), round(obstacle.cy + dx * sin + dy * cos, 2)])
    return corners


def world_outline(obstacles: Iterable[Obstacle]) -> list[dict[str, object]]:
    """Closed polygons, each {"kind": "solid" | "water", "points": [[x, y], ...]}."""
    shapes: list[dict[str, object]] = []
    for obstacle in obstacles:
        if obstacle.is_circle or obstacle.open_flag is not None:
            continue
        if obstacle.kind == "solid" and 4 * obstacle.half_x * obstacle.half_y < MIN_FOOTPRINT_M2:
            continue
        shapes.append({"kind": obstacle.kind, "points": _corners(obstacle)})
    return shapes
