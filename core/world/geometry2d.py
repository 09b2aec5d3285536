"""Small 2-D helpers shared by terrain, collision and scene building."""

from __future__ import annotations

import math
from collections.abc import Sequence

Point = tuple[float, float]


def distance_to_segment(px: float, py: float, ax: float, ay: float, bx: float, by: float) -> float:
    dx, dy = bx - ax, by - ay
    length_sq = dx * dx + dy * dy
    t = 0.0 if length_sq == 0 else max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / length_sq))
    return math.hypot(px - (ax + t * dx), py - (ay + t * dy))


def distance_to_polyline(px: float, py: float, points: Sequence[Point]) -> float:
    return min(
        distance_to_segment(px, py, *points[i], *points[i + 1]) for i in range(len(points) - 1)
    )


def heading_vector(heading_deg: float) -> Point:
    """Unit vector for a Panda3D heading: 0 faces +y, positive turns counter-clockwise."""
    rad = math.radians(heading_deg)
    return -math.sin(rad), math.cos(rad)


def heading_of(dx: float, dy: float) -> float:
    return math.degrees(math.atan2(-dx, dy))


def wrap_degrees(angle: float) -> float:
    """Wrap into [-180, 180)."""
    return (angle + 180.0) % 360.0 - 180.0


def segment_rect(a: Point, b: Point, thickness: float) -> tuple[float, float, float, float, float]:
    """The rectangle (cx, cy, half_length, half_thickness, heading) covering segment a-b."""
    (ax, ay), (bx, by) = a, b
    length = math.hypot(bx - ax, by - ay)
    angle = math.degrees(math.atan2(by - ay, bx - ax))
    return (ax + bx) / 2, (ay + by) / 2, length / 2, thickness / 2, angle
