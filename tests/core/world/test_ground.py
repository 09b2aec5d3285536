"""What is underfoot: the surface a footstep sounds of, painted tile by tile as footfalls reach it."""

from __future__ import annotations

import numpy as np

from core.paths import DEFAULT_WORLD
from core.world.content import load_world
from core.world.layout import build_layout
from core.world.sound.ground import Ground
from core.world.terrain import polyline_distance_grid


def test_every_plaza_and_road_sounds_of_its_own_surface_across_the_town():
    """Each is looked up on its own tile, wherever it lies: tiles are painted as footfalls first reach them."""
    spec = load_world(DEFAULT_WORLD)
    terrain = build_layout(spec).terrain
    ground = Ground(spec, terrain)
    for plaza in spec.plazas:
        assert ground.surface_at(*plaza.center) == plaza.surface, plaza
    roads = 0
    for road in spec.roads:
        for (ax, ay), (bx, by) in zip(road.points, road.points[1:], strict=False):
            x, y = (ax + bx) / 2, (ay + by) / 2
            covered = [p for p in spec.plazas if np.hypot(x - p.center[0], y - p.center[1]) <= p.radius]
            if terrain.on_deck(x, y) or covered:
                continue  # a bridge's planks, or a plaza laid over the road
            roads += 1
            # Where roads overlap, the first listed is on top
            on_top = next(r for r in spec.roads if polyline_distance_grid(np.array([x]), np.array([y]), r.points)[0]
                          <= r.width / 2)
            assert ground.surface_at(x, y) == on_top.surface, (road, x, y)
    assert roads >= 15
    assert ground.surface_at(-49.3, -9) == "sand" and ground.surface_at(-6, 40) == "grass"  # the shore, a lawn
