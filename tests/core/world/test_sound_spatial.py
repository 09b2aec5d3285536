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
