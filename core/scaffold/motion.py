"""How the picture moved between two frames, from the pixels alone (OpenCV).

Corners of the first frame are tracked into the second (pyramidal Lucas-Kanade, kept only where tracking back
lands where it began). Corners that did not move are dropped: they are the game's HUD (hotbar, crosshair, text)
or things too far away to tell. What the moving ones did says how the view moved:

* walking forward spreads them away from the centre (radial flow > 0), walking back draws them in;
* a strafe or a turn shifts them sideways (a strafe moves near things more than far ones: parallax);
* looking up or down shifts them all vertically by about the same; walking with a camera pitched toward the
  ground shifts them vertically too, but near things (the bottom of the picture) far more than far ones;
* a jump shifts them vertically, and they come back when it lands.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

ANALYSIS_WIDTH = 320    # frames are scaled to this width first: enough detail, and fast on two cores
CHANGE_LEVEL = 12       # a pixel changed when its grey level moved by more than this (of 255)
MOVING_PX = 0.5         # a corner moved when it travelled farther than this (analysed pixels)
MIN_MOVING = 6          # fewer moving corners than this: nothing moved
MIN_HALF = 3            # a half of the picture with fewer moving corners than this says nothing on its own
SAME_WAY_SHARE = 0.2    # halves moving the same way, one at less than this share of the other: not a shift
LEVEL_SHARE = 0.6       # top and bottom moving vertically, the slower at least this share of the faster: a look
MAX_CORNERS = 400
CORNER_QUALITY = 0.001   # of the strongest corner: low, so that a snowfield still gives corners to follow
ROUND_TRIP_PX = 0.5     # tracking back must land this close to where it began
EDGE_PX = 12            # corners this close to the edge, before or after, are dropped: a thing leaving the picture
                        # is matched to whatever looks like it inside (a tree's repeating leaves)


def grey(frame: np.ndarray) -> np.ndarray:
    """An RGB frame as uint8 grey at ANALYSIS_WIDTH (height kept in proportion)."""
    height, width = frame.shape[:2]
    size = (ANALYSIS_WIDTH, max(8, round(height * ANALYSIS_WIDTH / width)))
    small = cv2.resize(frame, size, interpolation=cv2.INTER_AREA)
    return cv2.cvtColor(small, cv2.COLOR_RGB2GRAY)


def changed(before: np.ndarray, after: np.ndarray) -> float:
    """The share of pixels (0..1) whose grey level changed by more than CHANGE_LEVEL."""
    difference = cv2.absdiff(before, after)
    return float(np.count_nonzero(difference > CHANGE_LEVEL)) / difference.size


@dataclass(frozen=True)
class Movement:
    """How the moving corners moved from one frame to another, in analysed pixels (x right, y down)."""

    tracked: int       # corners followed both ways
    moving: int        # of which moved
    u: float           # median horizontal motion of the moving corners
    v: float           # median vertical motion
    radial: float      # median motion away from the picture's centre (> 0: the picture grows)
    spread_u: float    # how unevenly they moved sideways, relative to |u| (a turn: small; a strafe: parallax)
    # The motion fitted as flow = (tx, ty) + expansion x (position - centre), both axes at once (so that a near
    # thing on one side cannot pass for a sideways move: walking back draws the ground up, too).
    tx: float = 0.0
    ty: float = 0.0
    expansion_px: float = 0.0   # the fitted expansion's motion at the corners' median distance from the centre
    # The median horizontal motion of the moving corners left and right of the centre (None: fewer than
    # MIN_HALF there). Walking forward or back moves the two halves opposite ways; a strafe or a turn moves both
    # the same way, however unevenly (a near wall on one side also fits an expansion: parallax).
    left_u: float | None = None
    right_u: float | None = None
    # The same for the vertical motion of the corners above and below the centre. A look turns the camera: every
    # corner moves by about the same angle, whatever its depth. A step moves near ones more: a camera pitched
    # toward the ground (a third-person view) moves the ground at the bottom far more than what is at the top.
    top_v: float | None = None
    bottom_v: float | None = None

    @property
    def halves_apart(self) -> bool | None:
        """True: the halves moved opposite ways (in or out); False: the same way, the slower at least
        SAME_WAY_SHARE of the faster; None: not known (a half without moving corners, or one barely moving)."""
        if self.left_u is None or self.right_u is None:
            return None
        if self.left_u * self.right_u < 0:
            return True
        slower, faster = sorted((abs(self.left_u), abs(self.right_u)))
        return False if faster > 0 and slower >= SAME_WAY_SHARE * faster else None

    @property
    def level(self) -> bool | None:
        """True: the top and bottom of the picture moved vertically alike (a look); False: unlike, or opposite
        ways (depth at work: a step); None: not known (a half without moving corners, or neither moving)."""
        if self.top_v is None or self.bottom_v is None:
            return None
        slower, faster = sorted((abs(self.top_v), abs(self.bottom_v)))
        if faster < MOVING_PX:
            return None
        return self.top_v * self.bottom_v > 0 and slower >= LEVEL_SHARE * faster

    @property
    def strongest_px(self) -> float:
        """The largest motion it can be judged by (analysed pixels): the fit's shift or expansion, or a half's."""
        return max(abs(self.tx), abs(self.ty), abs(self.expansion_px), abs(self.left_u or 0.0),
                   abs(self.right_u or 0.0))

    @property
    def moved(self) -> bool:
        return self.moving >= MIN_MOVING

    def describe(self) -> str:
        if not self.moved:
            return f"{self.moving} of {self.tracked} tracked corners moved"
        return (f"{self.moving} of {self.tracked} corners moved; fitted: {self.tx:+.1f} px across, {self.ty:+.1f} px "
                f"down, {self.expansion_px:+.1f} px outward")


STILL = Movement(0, 0, 0.0, 0.0, 0.0, 0.0)


def fit_motion(where: np.ndarray, flow: np.ndarray) -> tuple[float, float, float]:
    """(tx, ty, expansion) of flow = (tx, ty) + expansion x where, by least squares, refitted once without the
    corners it fits worst (a bobbing hand, a walking creature)."""
    count = len(where)
    design = np.zeros((2 * count, 3), np.float64)
    design[:count, 0] = 1
    design[count:, 1] = 1
    design[:count, 2] = where[:, 0]
    design[count:, 2] = where[:, 1]
    target = np.concatenate([flow[:, 0], flow[:, 1]]).astype(np.float64)
    keep = np.ones(2 * count, bool)
    solution = np.zeros(3, np.float64)
    for _ in range(2):
        solution = np.linalg.lstsq(design[keep], target[keep], rcond=None)[0]
        error = np.abs(design @ solution - target)
        keep = error <= max(3 * float(np.median(error)), 0.5)
    return float(solution[0]), float(solution[1]), float(solution[2])


@dataclass(frozen=True)
class Tracks:
    """Corners that moved: where they were (relative to the picture's centre, y down) and how far they went."""

    tracked: int
    where: np.ndarray   # (N, 2) float32
    flow: np.ndarray    # (N, 2) float32


def tracks(before: np.ndarray, after: np.ndarray) -> Tracks:
    """Corners of `before` followed into `after` and back; those that moved."""
    empty = np.zeros((0, 2), np.float32)
    found_corners = cv2.goodFeaturesToTrack(before, MAX_CORNERS, CORNER_QUALITY, 4)
    if found_corners is None or len(found_corners) == 0:  # pyright: ignore[reportUnnecessaryComparison]  # OpenCV returns None when the picture has no corners
        return Tracks(0, empty, empty)
    corners = np.asarray(found_corners, np.float32).reshape(-1, 1, 2)
    ahead_raw, found_raw, _ = cv2.calcOpticalFlowPyrLK(before, after, corners, np.empty_like(corners),
                                                       winSize=(21, 21), maxLevel=3)
    ahead = np.asarray(ahead_raw, np.float32)
    back_raw, found_back_raw, _ = cv2.calcOpticalFlowPyrLK(after, before, ahead, np.empty_like(ahead),
                                                           winSize=(21, 21), maxLevel=3)
    back = np.asarray(back_raw, np.float32)
    found = np.asarray(found_raw).ravel() == 1
    found_back = np.asarray(found_back_raw).ravel() == 1
    start = corners.reshape(-1, 2)
    trip = np.linalg.norm((back - corners).reshape(-1, 2), axis=1)
    height, width = before.shape
    end = ahead.reshape(-1, 2)
    inside = np.all((start >= EDGE_PX) & (start < [width - EDGE_PX, height - EDGE_PX]) & (end >= EDGE_PX)
                    & (end < [width - EDGE_PX, height - EDGE_PX]), axis=1)
    ok = found & found_back & (trip < ROUND_TRIP_PX) & inside
    flow = (ahead - corners).reshape(-1, 2)[ok]
    where = start[ok] - np.array([(width - 1) / 2, (height - 1) / 2], np.float32)
    moving = np.linalg.norm(flow, axis=1) > MOVING_PX
    return Tracks(int(ok.sum()), where[moving], flow[moving])


def movement(before: np.ndarray, after: np.ndarray) -> Movement:
    """Track corners of `before` into `after` and summarise the ones that moved."""
    seen = tracks(before, after)
    flow, where = seen.flow, seen.where
    if len(flow) == 0:
        return Movement(seen.tracked, 0, 0.0, 0.0, 0.0, 0.0)
    distance = np.maximum(np.linalg.norm(where, axis=1), 1.0)
    radial = (flow * where).sum(axis=1) / distance
    u = float(np.median(flow[:, 0]))
    spread = float(np.median(np.abs(flow[:, 0] - u)))
    tx, ty, expansion = fit_motion(where, flow)
    left, right = half_motions(where, flow)
    top, bottom = half_motions(where, flow, axis=1)
    return Movement(seen.tracked, len(flow), u, float(np.median(flow[:, 1])), float(np.median(radial)),
                    spread / max(abs(u), MOVING_PX), tx, ty, expansion * float(np.median(distance)), left, right,
                    top, bottom)


def half_motions(where: np.ndarray, flow: np.ndarray, axis: int = 0) -> tuple[float | None, float | None]:
    """The median motion along `axis` (0: across, 1: down) of the corners before the centre on that axis (left,
    or above) and of those after it (right, or below)."""
    medians: list[float | None] = []
    for side in (where[:, axis] < 0, where[:, axis] > 0):
        medians.append(float(np.median(flow[side, axis])) if int(side.sum()) >= MIN_HALF else None)
    return medians[0], medians[1]


def central_shift(before: np.ndarray, after: np.ndarray, share: float = 0.25) -> tuple[float, float] | None:
    """The median motion (x, y) of moving corners within `share` of the picture's width of its centre, where a
    turn shifts the picture evenly (farther out, perspective stretches it); None when too few moved there."""
    seen = tracks(before, after)
    near = np.abs(seen.where[:, 0]) < before.shape[1] * share
    if int(near.sum()) < MIN_MOVING:
        return None
    return float(np.median(seen.flow[near, 0])), float(np.median(seen.flow[near, 1]))


@dataclass(frozen=True)
class Yaw:
    degrees: float   # how far the camera turned right: the first of `readings`
    spread: float    # how much the corners disagree, relative to |degrees|: a turn moves all alike, a strafe moves
                     # near things more than far ones (parallax)
    readings: tuple[float, ...] = ()   # the turn read three ways (see yaw()), most trusted first


def _agreed(angles: np.ndarray) -> float:
    """The angle most of `angles` agree on, within 8% (0.5 deg at least): their densest cluster's mean."""
    tolerance = np.maximum(0.5, 0.08 * np.abs(angles))
    near = np.abs(angles[:, None] - angles[None, :]) <= tolerance[:, None]
    return float(np.mean(angles[near[int(np.argmax(near.sum(axis=1)))]]))


def yaw(before: np.ndarray, after: np.ndarray, focal: float) -> Yaw | None:
    """How far the camera turned right, for a pinhole camera of `focal` analysed pixels: each moving corner at x
    went to x', an angle atan(x / f) - atan(x' / f). A camera that turns in place moves them all alike; one that
    orbits its character (third person) moves far things by nearly the whole turn and the character and the
    ground around it less; corners tracked wrongly scatter or, on a repeating texture, agree on a wrong angle. So
    the turn is read three ways: the angle most corners of the upper half (far things) agree on, the angle most
    of all corners agree on, and the median of all; the caller keeps the reading that a turn and its return
    confirm. None when too few moved."""
    seen = tracks(before, after)
    if len(seen.flow) < MIN_MOVING:
        return None
    x = seen.where[:, 0].astype(np.float64)
    angles = np.degrees(np.arctan(x / focal) - np.arctan((x + seen.flow[:, 0]) / focal))
    upper = seen.where[:, 1] < 0
    middle = float(np.median(angles))
    readings = (_agreed(angles[upper]) if int(upper.sum()) >= MIN_MOVING else _agreed(angles), _agreed(angles), middle)
    return Yaw(readings[0], float(np.median(np.abs(angles - middle))) / max(abs(middle), 0.1), readings)
