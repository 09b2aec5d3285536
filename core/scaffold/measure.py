"""What a backend needs, measured from the game's frames: which keys move the view and how, mouse look, how long
the picture takes to settle after an input, and whether it is still at rest."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from core.scaffold.motion import ANALYSIS_WIDTH, Movement, movement, yaw
from core.scaffold.mouse import MouseLook
from core.scaffold.probes import SETTLE_LIMIT_S, Probe, Prober

KEY_CANDIDATES = ("w", "s", "a", "d", "Up", "Down", "Left", "Right", "space")
HOLD_S = 0.4            # each key is held this long
JUMP_MIN_PX = 2.0       # a jump lifts the picture by at least this (analysed pixels) and brings it back
JUMP_OVER_BOB = 1.5     # where several keys seem to jump, the jump key moves the picture this many times more
TURN_SPREAD = 0.15      # without mouse look, corners that agree on a sideways key's angle within this share: it
                        # turns the view (a strafe moves near things more than far ones)

ROLES = ("forward", "back", "strafe_left", "strafe_right", "turn_left", "turn_right", "look_up", "look_down", "jump")
OPPOSITES = (("w", "s"), ("a", "d"), ("Up", "Down"), ("Left", "Right"))   # by convention
PAIR_RETRIES = 2        # opposite keys that alone did not move opposite ways are tried again this often
KEY_MIN_PX = 1.0        # a key whose fitted motion stays under this (analysed pixels) named no direction: a picture
                        # that moves at rest (OpenArena's, 0.5% of pixels) gives idle keys a few tenths of a pixel
PAIR_MIN_PX = 1.5       # judged together, what the two keys do differently must move the picture this far (analysed
                        # pixels): less is a bob or the picture's own motion at rest, not a direction
OPPOSITE_ROLE = {"forward": "back", "back": "forward", "strafe_left": "strafe_right", "strafe_right": "strafe_left",
                 "turn_left": "turn_right", "turn_right": "turn_left", "look_up": "look_down", "look_down": "look_up"}


@dataclass(frozen=True)
class KeyEffect:
    key: str
    role: str | None     # one of ROLES, or None: no use found
    evidence: str        # how it was measured, for the file's comment
    settle_s: float | None
    seen: Movement | None = None   # the fitted motion it was judged by
    spread: float | None = None    # how much the corners disagreed on a turn's angle


def focal_px(fov_degrees: float, axis_px: int) -> float:
    """A pinhole camera's focal length in pixels, for a field of view of `fov_degrees` across `axis_px` pixels."""
    return (axis_px / 2) / math.tan(math.radians(fov_degrees) / 2)


@dataclass(frozen=True)
class Measurements:
    width: int                 # the window's picture, in its own pixels
    height: int
    ready_s: float             # from our start until the picture was still (the world drawn)
    rest_change: float         # the most the picture changed between two frames at rest (share of pixels)
    still_at_rest: bool
    keys: list[KeyEffect]
    mouse: MouseLook

    def key_for(self, role: str) -> str | None:
        """The first key found for `role`."""
        return next((effect.key for effect in self.keys if effect.role == role), None)

    @property
    def settle_s(self) -> float | None:
        """The longest time the picture took to rest after an input that moved it (None: none moved)."""
        times = [e.settle_s for e in self.keys if e.role is not None and e.settle_s is not None]
        if self.mouse.settle_s is not None and self.mouse.degrees_per_px is not None:
            times.append(self.mouse.settle_s)
        return max(times) if times else None


def classify(probe: Probe, focal: float, turn_spread: float) -> KeyEffect:
    """What a held key did to the view (see ROLES), with the evidence in words. `focal`: the camera's focal length
    in analysed pixels; `turn_spread`: how much corners may disagree on an angle for a sideways move to be a turn."""
    path = [movement(probe.before, seen.picture) for seen in probe.during]
    end = path[-1]
    back = movement(probe.before, probe.after)
    peak = max(path, key=lambda m: abs(m.ty) if m.moved else 0.0)
    settle = probe.settle_s
    if not any(m.moved for m in path) and not back.moved:
        return KeyEffect(probe.what, None, f"nothing moved ({end.describe()})", settle)
    vertical = abs(peak.ty) >= JUMP_MIN_PX and abs(peak.ty) > max(abs(peak.tx), abs(peak.expansion_px))
    returned = not back.moved or abs(back.ty) < abs(peak.ty) / 3
    if vertical and returned:
        if peak.ty > 0:
            return KeyEffect(probe.what, "jump", f"the picture dropped {peak.ty:.1f} px and came back ("
                             f"{back.describe()} after)", settle, peak)
        return KeyEffect(probe.what, None, f"the picture rose {-peak.ty:.1f} px and came back (crouch?)", settle)
    # Judged at key-up, where the walk shows most. (The rested picture, tried to get past OpenArena's bob, showed
    # Minetest's 0.4 s walk as under a pixel in a loaded CI run: the view bob at key-up is part of the evidence.)
    shown, frame = (end, probe.during[-1].picture) if end.moved else (back, probe.after)
    if not shown.moved:
        # It moved only for a moment (a view bob against a wall, a flash): no motion is left to give a direction,
        # and a still fit would read as a step back.
        return KeyEffect(probe.what, None, f"the picture moved only while the key was held and came back where it "
                         f"began ({back.describe()} after)", settle)
    if shown.strongest_px < KEY_MIN_PX:
        return KeyEffect(probe.what, None, f"the picture moved too little to tell a direction ({shown.describe()}; "
                         f"under {KEY_MIN_PX:g} px)", settle)
    turned = yaw(probe.before, frame, focal)
    spread = turned.spread if turned is not None else 1.0
    role, how = _direction(shown, spread, turn_spread)
    return KeyEffect(probe.what, role, shown.describe() + how, settle, shown, spread)


def _direction(seen: Movement, spread: float, turn_spread: float) -> tuple[str, str]:
    """(the role, what decided it beyond the fitted motion). Where the picture's two halves tell, they choose
    between the fit's two horizontal readings: halves moving apart or together are a step forward or back,
    halves moving the same way a sideways move (the fit alone took a strafe past a near tree for a step)."""
    apart = seen.halves_apart
    expansion = 0.0 if apart is False else abs(seen.expansion_px)
    across = 0.0 if apart is True else abs(seen.tx)
    halves = "" if apart is None else (f"; the picture's halves moved {seen.left_u:+.1f} and {seen.right_u:+.1f} "
                                       "px across")
    strongest = max(expansion, across, abs(seen.ty))
    if apart is True and strongest != abs(seen.ty):
        # The halves' own directions say which: apart (outward) is forward, together is back.
        outward = (seen.right_u or 0.0) > 0
        return ("forward" if outward else "back"), halves
    if strongest == expansion and apart is None:
        return ("forward" if seen.expansion_px > 0 else "back"), ""
    if strongest == across:
        side = "left" if seen.tx > 0 else "right"  # the picture moves the other way
        if turn_spread <= 0:
            return f"strafe_{side}", halves + "; a sideways shift (the mouse turns the camera, so taken as a strafe)"
        kind = "turn" if spread <= turn_spread else "strafe"
        why = "a turn" if kind == "turn" else "parallax"
        return f"{kind}_{side}", halves + f"; corners disagree on its angle by {spread:.0%} ({why})"
    if seen.level is False:
        # Vertical, but the top and bottom did not move alike: depth at work, so a step with the camera pitched
        # toward the ground (the near ground at the bottom moves the most), not a look.
        top, bottom = seen.top_v or 0.0, seen.bottom_v or 0.0
        return ("forward" if bottom > top else "back"), halves + (
            f"; the picture's top moved {top:+.1f} px down and its bottom {bottom:+.1f} (unlike: a step, not a look)")
    return ("look_up" if seen.ty > 0 else "look_down"), halves


def pair_up(first: KeyEffect, second: KeyEffect, turn_spread: float) -> tuple[KeyEffect, KeyEffect]:
    """Two keys that move opposite ways by convention (W and S, A and D, the arrows), judged together when alone
    they do not say opposite things: half their difference is what they do, with what both share (a bobbing
    hand, drift) taken out."""
    a, b = first.seen, second.seen
    if a is None or b is None or "jump" in (first.role, second.role):
        return first, second
    half = replace(a, tx=(a.tx - b.tx) / 2, ty=(a.ty - b.ty) / 2, expansion_px=(a.expansion_px - b.expansion_px) / 2,
                   left_u=_half_difference(a.left_u, b.left_u), right_u=_half_difference(a.right_u, b.right_u),
                   top_v=_half_difference(a.top_v, b.top_v), bottom_v=_half_difference(a.bottom_v, b.bottom_v))
    together = (f"; judged with its opposite: half of {first.key} minus {second.key} is {half.tx:+.1f} px across, "
                f"{half.ty:+.1f} px down, {half.expansion_px:+.1f} px outward")
    if half.strongest_px < PAIR_MIN_PX:
        # OpenArena facing far walls and sky: its arrow keys' bobs, taken together, read as a step forward and back.
        weak = together + f", too little to judge (under {PAIR_MIN_PX:g} px): face near, textured things and run again"
        return (replace(first, role=None, evidence=first.evidence.split("; ")[0] + weak),
                replace(second, role=None, evidence=second.evidence.split("; ")[0] + weak))
    role, how = _direction(half, max(first.spread or 0.0, second.spread or 0.0), turn_spread)
    together += how
    return (replace(first, role=role, evidence=first.evidence.split("; ")[0] + together),
            replace(second, role=OPPOSITE_ROLE[role], evidence=second.evidence.split("; ")[0] + together))


def _half_difference(first: float | None, second: float | None) -> float | None:
    return None if first is None or second is None else (first - second) / 2


def _axis(role: str | None) -> str | None:
    """forward/back, strafe_left/right...: the axis a role moves along (None: no axis, or a jump)."""
    return None if role is None or role == "jump" else role.rsplit("_", 1)[0] if "_" in role else "ahead"


def _clashing_pairs(pairs: list[tuple[str, str]], effects: dict[str, KeyEffect]) -> list[tuple[str, str]]:
    """The opposite pairs whose axis the other pair of their cluster (W/S with A/D, the arrows together) moves
    along too. (Across clusters the same axis is common: many games walk with both WASD and the arrows.)"""
    clashing: list[tuple[str, str]] = []
    for cluster in (OPPOSITES[:2], OPPOSITES[2:]):
        present = [pair for pair in cluster if pair in pairs]
        axes = [_axis(effects[pair[0]].role) for pair in present]
        if len(present) == 2 and axes[0] is not None and axes[0] == axes[1]:
            clashing.extend(present)
    return clashing


def _opposed(first: KeyEffect, second: KeyEffect) -> bool:
    return first.role is not None and OPPOSITE_ROLE.get(first.role) == second.role


def measure_keys(prober: Prober, keys: tuple[str, ...], focal: float, mouse: MouseLook,
                 say: Callable[[str], None]) -> list[KeyEffect]:
    """Hold each key in turn and say what it did; `focal` in window pixels. Keys that move opposite ways by
    convention and alone did not (a wall, a slope, a snowfield with few corners) are tried again, up to
    PAIR_RETRIES times, and then judged together."""
    analysed = focal * ANALYSIS_WIDTH / prober.window.width
    # With mouse look the mouse turns the camera and sideways keys strafe (or turn the character, which goes on
    # the same stick); without it, a key that shifts every corner by the same angle turns the camera.
    turn_spread = 0.0 if mouse.degrees_per_px is not None else TURN_SPREAD

    def press(key: str) -> KeyEffect:
        return classify(prober.press(key, HOLD_S, SETTLE_LIMIT_S), analysed, turn_spread)

    effects = {key: press(key) for key in keys}
    pairs = [(first, second) for first, second in OPPOSITES if first in effects and second in effects]

    def judge(first: str, second: str) -> None:
        if effects[first].role is None or effects[second].role is None:
            return
        tries = 0
        while not _opposed(effects[first], effects[second]) and tries < PAIR_RETRIES:
            tries += 1
            effects[first], effects[second] = press(first), press(second)
        if not _opposed(effects[first], effects[second]):
            effects[first], effects[second] = pair_up(effects[first], effects[second], turn_spread)
        elif tries:
            note = f"; alone they did not move opposite ways until try {tries + 1}"
            effects[first] = replace(effects[first], evidence=effects[first].evidence + note)
            effects[second] = replace(effects[second], evidence=effects[second].evidence + note)

    for first, second in pairs:
        judge(first, second)
    # Two pairs that move the view along the same axis contradict each other (in a CI run W and S read as a
    # strafe, beside A and D that strafed): both are held again, up to PAIR_RETRIES times.
    for _ in range(PAIR_RETRIES):
        clashing = _clashing_pairs(pairs, effects)
        if not clashing:
            break
        say(f"  {' and '.join('/'.join(pair) for pair in clashing)} moved along the same axis; trying them again")
        for first, second in clashing:
            effects[first], effects[second] = press(first), press(second)
            judge(first, second)
    effects = one_jump(effects)
    for effect in effects.values():
        say(f"  {effect.key:>6}: {effect.role or 'no use found'} ({effect.evidence})")
    return list(effects.values())


def one_jump(effects: dict[str, KeyEffect]) -> dict[str, KeyEffect]:
    """A game has one jump key. Where several keys lifted or dropped the picture and brought it back, the others did
    what walking does to a bobbing view with nothing near to show the motion (sky, far walls): on OpenArena every
    walking key and arrow read as a jump of 7 to 17 px, and space 34. The jump is kept only where it is at least
    JUMP_OVER_BOB times every other; the rest have no role, and say why."""
    jumps = [e for e in effects.values() if e.role == "jump" and e.seen is not None]
    if len(jumps) < 2:
        return effects
    lifts = {e.key: abs(e.seen.ty) for e in jumps if e.seen is not None}
    highest = max(lifts, key=lambda key: lifts[key])
    stands_out = all(lifts[highest] >= JUMP_OVER_BOB * lift for key, lift in lifts.items() if key != highest)
    bobbing = [key for key in lifts if key != highest or not stands_out]
    note = (f"; {len(jumps)} keys moved the picture up or down and back: a walk's bob where nothing near shows the "
            "motion (sky, far walls), not a jump; face near, textured things and run again")
    kept = dict(effects)
    for key in bobbing:
        kept[key] = replace(effects[key], role=None, evidence=effects[key].evidence + note)
    return kept
