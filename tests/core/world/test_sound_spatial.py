"""Where a line of sound (the stream, the market street) is heard from: the shortcut the mixer takes gives
the very same point as looking at every segment."""

from __future__ import annotations

import numpy as np

from core.world.sound.spatial import shape_of
from tests.core.world.sound_rig import town


def test_a_lines_nearest_point_is_the_same_from_the_segments_that_can_be_nearest():
    spec = town()
    lines = [shape_of(s, spec, 0.0) for s in spec.sound.sources if s.follows == "stream" or s.points]
    assert any(shape.points is not None and len(shape.points) > 2 for shape in lines)
    rng = np.random.default_rng(3)
    for _ in range(400):
        x, y = rng.uniform(-120, 120, 2)
        walk = rng.uniform(0, 3.0)  # how far the ears go within a block
        angles = rng.uniform(0, 2 * np.pi, 16)
        xs, ys = x + walk * np.cos(angles) * rng.random(16), y + walk * np.sin(angles) * rng.random(16)
        xs[0], ys[0] = x, y
        spread = float(np.hypot(xs - x, ys - y).max())
        for shape in lines:
            everywhere = shape.nearest(xs, ys)
            shortcut = shape.nearest(xs, ys, (float(x), float(y), spread))
            assert np.array_equal(everywhere[0], shortcut[0]) and np.array_equal(everywhere[1], shortcut[1])


def test_a_listener_walking_along_the_stream_hears_it_from_the_same_points_as_looking_at_every_segment():
    """Block after block the mixer asks again from a little farther on, and the line remembers which segment
    was nearest last time: crossing from one segment's reach into the next must still give the exact points."""
    spec = town()
    stream = next(shape_of(s, spec, 0.0) for s in spec.sound.sources if s.follows == "stream")
    rng = np.random.default_rng(5)
    x, y, heading = -30.0, -120.0, 90.0
    for _ in range(3000):  # about 1.5 km of walking, wandering across the stream's segments
        heading += rng.normal(0.0, 12.0)
        steps = rng.uniform(0.0, 0.25, 16).cumsum()
        xs = x + steps * np.cos(np.radians(heading))
        ys = y + steps * np.sin(np.radians(heading))
        xs[0], ys[0] = x, y
        spread = float(np.hypot(xs - x, ys - y).max())
        everywhere = stream.nearest(xs, ys)
        shortcut = stream.nearest(xs, ys, (x, y, spread))
        assert np.array_equal(everywhere[0], shortcut[0]) and np.array_equal(everywhere[1], shortcut[1])
        x, y = float(xs[-1]), float(ys[-1])
        if not (-80.0 < x < -10.0 and -115.0 < y < 115.0):  # back towards the stream
            heading = float(np.degrees(np.arctan2(rng.uniform(-100, 100) - y, -45.0 - x)))
