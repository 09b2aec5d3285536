"""Where a sound is heard from, by a listener at the character's head facing where the camera faces.

For each source and each listener pose (vectorised over poses): distance attenuation, the level difference
between the ears (ILD: MAX_ILD_DB * sin(azimuth), so it reads back as a direction) and a little less level
from behind; and for each event, when it starts, a small time difference (ITD, at most MAX_ITD_S). Line and
area sources (a stream, the sea, a market street) are heard from their nearest point; ambience is placed by
level alone, events (footfalls, bumps, voices, cues, the bell) by level and time.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from core.world.content import WorldSpec
from core.world.sound_spec import Source

MAX_ILD_DB = 12.0
MAX_ITD_S = 0.00063  # a human head's largest interaural delay is about 0.65 ms
BEHIND_GAIN = 0.7  # directly behind; in front is 1
NEAR_M = 0.3  # closer than this the direction blurs to the middle (inside a source, a sound is everywhere)
HEAD_M = 1.6  # the listener's ears above the character's feet
TIE_M = 1e-6  # segments of a line this close to being equally near are all kept (see Shape.nearest)
SETTLED_SLACK_M = 1e-9  # far more than the rounding of distances within the world (~1e-13 m)
BEHIND_SLOPE = (1.0 - BEHIND_GAIN) / 2
ILD_EXPONENT = MAX_ILD_DB * math.log(10) / 20
SQRT2 = math.sqrt(2.0)


class Shape:
    """The nearest point of a source to each listener position."""

    def __init__(self, points: np.ndarray | None = None, area: tuple[float, float, float, float] | None = None,
                 height: float = 1.0, ground_z: float = 0.0) -> None:
        self.points = points
        self.area = area
        self.z = ground_z + height
        if area is not None:
            self.box = area
        else:
            assert points is not None
            (x0, y0), (x1, y1) = points.min(axis=0), points.max(axis=0)
            self.box = (float(x0), float(y0), float(x1), float(y1))
            self._point = (float(points[0, 0]), float(points[0, 1]))
            a, along = points[:-1, :, None], np.diff(points, axis=0)[:, :, None]
            self._segments = (a[:, 0], a[:, 1], along[:, 0], along[:, 1],
                              np.maximum(along[:, 0] ** 2 + along[:, 1] ** 2, 1e-12))
            # the same numbers as Python floats, one tuple per segment: ax, ay, along x, along y, length squared
            self._floats = list(zip(*(part[:, 0].tolist() for part in self._segments), strict=True))
        # The last answer of only_segment that found one segment: where it was asked (x, y), the segment's index,
        # and by how much the next nearest segment was farther from there. Listeners move little between
        # blocks, so most answers follow from it without measuring every segment again.
        self._settled: tuple[float, float, int, float] | None = None

    def distance_from(self, x: float, y: float) -> float:
        """How far (x, y) is from the shape's bounding box: cheap, for leaving out sources far away."""
        x0, y0, x1, y1 = self.box
        return math.hypot(max(x0 - x, x - x1, 0.0), max(y0 - y, y - y1, 0.0))

    def nearest(self, xs: np.ndarray, ys: np.ndarray,
                around: tuple[float, float, float] | None = None) -> tuple[np.ndarray | float, np.ndarray | float]:
        """The shape's nearest point to each (x, y): arrays like xs and ys, or a point's own two numbers.

        around = (x, y, r), every (xs, ys) within r of (x, y): a line then leaves out the segments too far
        from there to be nearest to any of them (the answer is the same, for a fraction of the work)."""
        if self.area is not None:
            x0, y0, x1, y1 = self.area
            return np.minimum(np.maximum(xs, x0), x1), np.minimum(np.maximum(ys, y0), y1)
        assert self.points is not None
        if len(self.points) == 1:
            return self._point[0], self._point[1]
        if around is not None:
            segment = self.only_segment(around)
            if segment is not None:
                return on_segment(xs, ys, segment)
        # every segment against every pose at once: (segments, poses)
        ax, ay, along_x, along_y, length_sq = self._segments
        t = ((xs - ax) * along_x + (ys - ay) * along_y) / length_sq
        t = np.minimum(np.maximum(t, 0.0), 1.0)
        px, py = ax + t * along_x, ay + t * along_y
        best = ((xs - px) ** 2 + (ys - py) ** 2).argmin(axis=0)
        poses = np.arange(len(xs))
        return px[best, poses], py[best, poses]


    def only_segment(self, around: tuple[float, float, float]) -> tuple[float, float, float, float, float] | None:
        """For a line: the one segment that can be nearest to every pose within r of (x, y) = around, as (ax, ay,
        along x, along y, length squared); None where several can (or the shape is no line of segments)."""
        if self.area is not None or self.points is None or len(self.points) == 1:
            return None
        if len(self._floats) == 1:
            return self._floats[0]
        x, y, r = around
        if self._settled is not None:
            # Distances to segments change by at most how far (x, y) moved since: while the next nearest was
            # farther by more than twice that, plus 2r and the tie margin, it still cannot be nearest to any
            # pose, and the answer is the same as measuring again (SETTLED_SLACK_M covers the rounding of it).
            then_x, then_y, index, gap = self._settled
            if gap > 2.0 * (math.hypot(x - then_x, y - then_y) + r) + TIE_M + SETTLED_SLACK_M:
                return self._floats[index]
        reach = [_segment_distance(x, y, *segment) for segment in self._floats]
        nearest = min(reach)
        # TIE_M: a segment left out is farther from every pose by more than rounding could blur
        candidates = [k for k, d in enumerate(reach) if d <= nearest + 2.0 * r + TIE_M]
        if len(candidates) != 1:
            self._settled = None
            return None
        index = candidates[0]
        self._settled = (x, y, index, min(d for k, d in enumerate(reach) if k != index) - nearest)
        return self._floats[index]


def on_segment(xs: np.ndarray, ys: np.ndarray,
               segment: tuple[float, float, float, float, float]) -> tuple[np.ndarray, np.ndarray]:
    """A segment's nearest point to each (x, y), the segment as only_segment gives it. Its numbers are Python
    floats, which numpy applies to a whole array in fewer steps than arrays of them."""
    ax, ay, along_x, along_y, length_sq = segment
    t = np.minimum(np.maximum(((xs - ax) * along_x + (ys - ay) * along_y) / length_sq, 0.0), 1.0)
    return ax + t * along_x, ay + t * along_y


def _segment_distance(x: float, y: float, ax: float, ay: float, along_x: float, along_y: float,
                      length_sq: float) -> float:
    t = min(max(((x - ax) * along_x + (y - ay) * along_y) / length_sq, 0.0), 1.0)
    return math.hypot(x - ax - t * along_x, y - ay - t * along_y)


def shape_of(source: Source, spec: WorldSpec, ground_z: float) -> Shape:
    if source.follows == "stream" and spec.stream is not None:
        return Shape(np.array(spec.stream.points, float), height=source.height, ground_z=-0.5)
    if source.follows == "sea" and spec.sea is not None:
        _, y0, x1, y1 = spec.bounds
        return Shape(area=(spec.sea.shore_x, y0 - 200.0, max(x1, spec.sea.shore_x) + 200.0, y1 + 200.0),
                     height=source.height, ground_z=spec.sea.level)
    if source.area is not None:
        return Shape(area=source.area, height=source.height, ground_z=ground_z)
    points = [source.pos] if source.pos is not None else source.points or []
    return Shape(np.array(points, float), height=source.height, ground_z=ground_z)


# (offset, flat, distance, cos, sin, table, gain) -> (lateral * ILD_EXPONENT, level); see ears
Levels = Callable[[npt.NDArray[np.complex128], np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, float],
                  tuple[np.ndarray, np.ndarray]]

# what a sound's row of the mixer's table holds (mixer.py): its reference distance, its height, the gain below
# which it is too quiet to hear, and the distance at which it has faded out
REFERENCE, HEIGHT, QUIET, AUDIBLE = range(4)


def numpy_levels(offset: npt.NDArray[np.complex128], flat: np.ndarray, distance: np.ndarray, cos: np.ndarray,
                 sin: np.ndarray, table: np.ndarray, gain: float) -> tuple[np.ndarray, np.ndarray]:
    """The arithmetic of ears between numpy's transcendental functions: the exponent of the ears' level
    ratio, and the level. The compiled kernel does the same operations in the same order (kernel.py)."""
    reference_m, audible_m = table[:, REFERENCE:REFERENCE + 1], table[:, AUDIBLE:AUDIBLE + 1]
    dx, dy = offset.real, offset.imag
    # Heading 0 faces +y and turns counter-clockwise: the right ear points along (cos, sin) of the heading.
    inverse = 1.0 / np.maximum(distance, NEAR_M)
    lateral = (dx * cos + dy * sin) * inverse
    level = (reference_m * (gain * SQRT2)) / np.maximum(distance, reference_m)
    level *= np.maximum(1.0 - flat / audible_m, 0.0)
    level *= (dy * cos - dx * sin) * (inverse * BEHIND_SLOPE) + (1.0 - BEHIND_SLOPE)  # a little less from behind
    return lateral * ILD_EXPONENT, level


def ears(places: np.ndarray, table: np.ndarray, listeners: np.ndarray, gain: float = 1.0,
         levels: Levels = numpy_levels) -> np.ndarray:
    """(sources, 2, poses) float32: the gains of the left and right ear for sources at places[source, pose]
    (complex: x + iy), heard by listeners[pose] = (x, y, z of the ears, camera heading in degrees), a
    C-contiguous float64 array. table (sources, 4) float64, C-contiguous, gives each source's reference
    distance, height and fade-out distance (REFERENCE, HEIGHT, AUDIBLE): `gain` within the reference
    distance straight ahead, falling with distance, and faded out completely at the fade-out distance.

    Written for few numpy calls (each costs more than its arithmetic on these small arrays): the offsets as
    complex numbers, whose size is the distance on the ground in one call; the level difference's
    sqrt(2 / (1 + ratio^2)) as sqrt(2) / hypot(ratio, 1), with sqrt(2) folded into the level. The arithmetic
    between the transcendental functions is `levels`: numpy's, or the compiled kernel's (the same bits; the
    functions themselves stay numpy's, whose SIMD versions a C library's need not match)."""
    offset = places - listeners[:, :2].view(np.complex128)[:, 0]
    flat = np.abs(offset)
    distance = np.hypot(flat, table[:, HEIGHT:HEIGHT + 1] - listeners[:, 2])
    yaw = np.radians(listeners[:, 3])
    exponent, level = levels(offset, flat, distance, np.cos(yaw), np.sin(yaw), table, gain)
    ratio = np.exp(exponent)  # right over left: MAX_ILD_DB * lateral in decibels
    out = np.empty((len(level), 2, level.shape[1]), np.float32)
    left = out[:, 0]
    np.divide(level, np.hypot(ratio, 1.0), out=left)  # the two ears' power adds up to level's
    np.multiply(left, ratio, out=out[:, 1])
    return out


def interaural_delays(x: float, y: float, listener: tuple[float, float, float, float], rate: int) -> tuple[int, int]:
    """Whole-sample delays of the left and right ear for a sound at (x, y): the far ear hears it up to
    MAX_ITD_S later. Computed once per sound, when it starts (the level difference follows the camera)."""
    dx, dy = x - listener[0], y - listener[1]
    yaw = math.radians(listener[3])
    lateral = (dx * math.cos(yaw) + dy * math.sin(yaw)) / max(math.hypot(dx, dy), NEAR_M)
    itd = round(MAX_ITD_S * rate * lateral)
    return max(itd, 0), max(-itd, 0)  # a sound on the right reaches the left ear later
