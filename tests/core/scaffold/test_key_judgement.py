"""How a held key's motion is judged: a strafe past a near thing is a sideways shift, however unevenly the corners
move, and walking forward is an expansion (flow fields of a pinhole camera, made by hand; as in the scaffold,
corners that moved less than MOVING_PX are dropped: far things, the HUD); and two pairs of keys that claim the
same axis are held again."""

from __future__ import annotations

import numpy as np

from core.scaffold.measure import OPPOSITES, KeyEffect, _clashing_pairs, _direction, pair_up
from core.scaffold.motion import MOVING_PX, Movement, fit_motion, half_motions

FOCAL = 200.0
STEP_M = 0.3


def _corners(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.stack([rng.uniform(-150, 150, 300), rng.uniform(-80, 80, 300)], axis=1).astype(np.float32)


def _near_wall_right(where: np.ndarray) -> np.ndarray:
    """Depths: a wall along the right side, nearest at the right edge and receding toward the centre; on the left
    far hills (200 m: they move too little to count) and a few fence posts 8 m away."""
    x = where[:, 0].astype(np.float64)
    posts = np.arange(len(where)) % 8 == 0
    return np.where(x > 0, 1.2 * FOCAL / np.maximum(x, 10.0), np.where(posts, 8.0, 200.0))


def _ground_and_wall(where: np.ndarray) -> np.ndarray:
    """Depths: the ground below the horizon (eye 1.6 m above it), far hills above, a wall in the right third."""
    x, y = where[:, 0].astype(np.float64), where[:, 1].astype(np.float64)
    depth = np.where(y > 5, 1.6 * FOCAL / np.maximum(y, 5.0), 60.0)
    return np.where(x > 50, 1.5, depth)


def _role(where: np.ndarray, flow: np.ndarray) -> str:
    moving = np.linalg.norm(flow, axis=1) > MOVING_PX
    where, flow = where[moving], flow[moving]
    tx, ty, expansion = fit_motion(where, flow)
    distance = float(np.median(np.linalg.norm(where, axis=1)))
    seen = Movement(len(where), len(where), 0.0, 0.0, 0.0, 0.0, tx, ty, expansion * distance,
                    *half_motions(where, flow), *half_motions(where, flow, axis=1))
    return _direction(seen, 1.0, 0.0)[0]  # with mouse look: a sideways shift is a strafe


def _strafe(where: np.ndarray, depth: np.ndarray, metres_left: float) -> np.ndarray:
    return np.stack([FOCAL * metres_left / depth, np.zeros_like(depth)], axis=1).astype(np.float32)


def _walk(where: np.ndarray, depth: np.ndarray, metres_forward: float) -> np.ndarray:
    return (where * (metres_forward / depth)[:, None]).astype(np.float32)


def test_a_strafe_past_a_near_wall_is_a_sideways_shift_not_a_step_forward():
    for scene in (_near_wall_right, _ground_and_wall):
        for seed in range(5):
            where = _corners(seed)
            depth = scene(where)
            assert _role(where, _strafe(where, depth, STEP_M)) == "strafe_left", (scene.__name__, seed)
            assert _role(where, _strafe(where, depth, -STEP_M)) == "strafe_right", (scene.__name__, seed)


def test_walking_forward_and_back_past_the_same_walls_spreads_and_draws_in_the_corners():
    for scene in (_near_wall_right, _ground_and_wall):
        for seed in range(5):
            where = _corners(seed)
            depth = scene(where)
            assert _role(where, _walk(where, depth, STEP_M)) == "forward", (scene.__name__, seed)
            assert _role(where, _walk(where, depth, -STEP_M)) == "back", (scene.__name__, seed)


def _ground_seen_from_above(where: np.ndarray, pitch: float) -> np.ndarray:
    """Depths: a third-person camera 3 m above the ground, pitched `pitch` radians toward it; far hills above the
    horizon."""
    below = where[:, 1].astype(np.float64) * np.cos(pitch) / FOCAL + np.sin(pitch)
    return np.where(below > 0.02, 3.0 / np.maximum(below, 0.02), 200.0)


def _walk_pitched(where: np.ndarray, depth: np.ndarray, pitch: float, metres_forward: float) -> np.ndarray:
    """A step along the ground, not along the camera's axis (which points below the path): for the camera, ahead
    and up, so the picture moves down as well as out."""
    x, y = where[:, 0].astype(np.float64), where[:, 1].astype(np.float64)
    ahead, down = metres_forward * np.cos(pitch), metres_forward * np.sin(pitch)
    return np.stack([x * ahead / depth, (y * ahead + FOCAL * down) / depth], axis=1).astype(np.float32)


def _look(where: np.ndarray, radians_up: float) -> np.ndarray:
    """The camera pitched up: every corner moves down by about the same, whatever its depth."""
    x, y = where[:, 0].astype(np.float64), where[:, 1].astype(np.float64)
    flow = [x * y * radians_up / FOCAL, FOCAL * radians_up * (1 + (y / FOCAL) ** 2)]
    return np.stack(flow, axis=1).astype(np.float32)


def test_a_step_with_the_camera_pitched_toward_the_ground_is_a_step_and_a_look_is_a_look():
    """`backend new` on the built-in world's window (its camera looks down on the character) once read W and S as
    looking up and down: a step along the ground moves the picture down more than out. The near ground at the
    bottom moves far more than the far ground at the top; a look moves both alike."""
    for degrees in (0, 15, 30, 45):
        pitch = np.radians(degrees)
        for seed in range(5):
            where = _corners(seed)
            depth = _ground_seen_from_above(where, pitch)
            assert _role(where, _walk_pitched(where, depth, pitch, STEP_M)) == "forward", (degrees, seed)
            assert _role(where, _walk_pitched(where, depth, pitch, -STEP_M)) == "back", (degrees, seed)
            assert _role(where, _look(where, 0.02)) == "look_up", (degrees, seed)
            assert _role(where, _look(where, -0.02)) == "look_down", (degrees, seed)


def _effects(**roles: str | None) -> dict[str, KeyEffect]:
    return {key: KeyEffect(key, role, "", None) for key, role in roles.items()}


def test_w_s_read_as_a_strafe_beside_a_d_that_strafe_are_held_again():
    pairs = list(OPPOSITES)
    effects = _effects(w="strafe_right", s="strafe_left", a="strafe_left", d="strafe_right", Up=None, Down=None,
                       Left=None, Right=None)
    assert _clashing_pairs(pairs, effects) == [("w", "s"), ("a", "d")]
    effects = _effects(w="forward", s="back", a="strafe_left", d="strafe_right", Up="forward", Down="back",
                       Left="turn_left", Right="turn_right")
    assert _clashing_pairs(pairs, effects) == []  # the arrows walking too is no contradiction


def test_a_key_whose_picture_moved_only_for_a_moment_has_no_role():
    """OpenArena, walled in: 'a' shook the picture while held and it came back where it began; with no motion left
    the judgement read a still fit as a step back, and the backend file got 'left: a' and 'down: a'."""
    import cv2

    from core.scaffold.measure import classify
    from core.scaffold.probes import Probe, Seen

    rng = np.random.default_rng(3)
    scene = cv2.GaussianBlur((rng.random((200, 360)) * 255).astype(np.uint8), (5, 5), 0)
    rest = scene[10:190, 20:340]
    shaken = scene[14:194, 26:346]  # 6 px across, 4 px down for one frame
    probe = Probe("key a", rest, [Seen(0.1, shaken), Seen(0.2, rest.copy())], rest.copy(), 0.1)
    effect = classify(probe, FOCAL, 0.0)
    assert effect.role is None and "came back where it began" in effect.evidence


def test_a_key_that_moved_the_picture_a_fraction_of_a_pixel_has_no_role():
    """OpenArena facing far walls: its picture moves at rest, and Left and Right, idle there, were read as looking
    down and up from 0.4 and 0.5 px. Under a pixel names no direction; three pixels do."""
    import cv2

    from core.scaffold.measure import classify
    from core.scaffold.probes import Probe, Seen

    rng = np.random.default_rng(5)
    rest = cv2.GaussianBlur((rng.random((180, 320)) * 255).astype(np.uint8), (5, 5), 0)

    def shifted(down_px: float) -> np.ndarray:
        matrix = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, down_px]], np.float32)
        return cv2.warpAffine(rest, matrix, (320, 180), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)

    def judged(down_px: float) -> KeyEffect:
        moved = shifted(down_px)
        return classify(Probe("key Left", rest, [Seen(0.2, moved)], moved.copy(), 0.1), FOCAL, 0.0)

    faint = judged(0.6)
    assert faint.role is None and "too little to tell a direction" in faint.evidence, faint.evidence
    assert judged(3.0).role == "look_up"


def test_of_several_keys_that_seem_to_jump_only_one_that_stands_out_is_the_jump():
    """OpenArena at a spawn facing the sky: every walking key and arrow bobbed the view 7 to 17 px and back, and
    space jumped 34 px; the file got five jump keys and no walk. One jump at most, and only one that stands out."""
    from core.scaffold.measure import one_jump

    def jump(key: str, px: float) -> KeyEffect:
        seen = Movement(100, 100, 0.0, px, 0.0, 0.0, 0.0, px, 0.0)
        return KeyEffect(key, "jump", f"the picture dropped {px:.1f} px and came back", 0.2, seen)

    bobs = {"w": 7.5, "s": 11.8, "a": 16.8, "d": 7.2, "Up": 8.2}
    kept = one_jump({**{key: jump(key, px) for key, px in bobs.items()}, "space": jump("space", 33.6)})
    assert kept["space"].role == "jump"
    assert all(kept[key].role is None and "a walk's bob" in kept[key].evidence for key in bobs)
    alike = one_jump({key: jump(key, px) for key, px in bobs.items()})  # none stands out: none is the jump
    assert all(effect.role is None for effect in alike.values())
    alone = {"space": jump("space", 33.6)}
    assert one_jump(alone) == alone


def test_opposite_keys_judged_together_on_too_little_motion_get_no_role():
    """OpenArena facing far walls and sky: Left and Right (which did nothing there) each bobbed the picture by about
    a pixel; judged together they became a step forward and back. Too little motion names no direction."""
    left = Movement(86, 20, 0.0, 0.0, 0.0, 0.0, tx=1.1, ty=0.9, expansion_px=-0.4)
    right = Movement(70, 51, 0.0, 0.0, 0.0, 0.0, tx=-0.3, ty=-0.1, expansion_px=1.4)
    judged = pair_up(KeyEffect("Left", "look_up", "bob", 0.3, left), KeyEffect("Right", "look_down", "bob", 0.3, right),
                     0.15)
    assert [e.role for e in judged] == [None, None]
    assert all("too little to judge" in e.evidence for e in judged)
    # The same keys with a real difference between them (a strafe seen past a bob) are judged.
    left_strafe = Movement(86, 80, 0.0, 0.0, 0.0, 0.0, tx=4.1, ty=0.9, expansion_px=-0.4)
    judged = pair_up(KeyEffect("a", "look_up", "", 0.3, left_strafe), KeyEffect("d", "look_up", "", 0.3, right), 0.0)
    assert [e.role for e in judged] == ["strafe_left", "strafe_right"]
