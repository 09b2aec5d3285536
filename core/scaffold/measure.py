"""What a backend needs, measured from the game's frames: which keys move the view and how, mouse look, how long
the picture takes to settle after an input, and whether it is still at rest."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from core.scaffold.motion import ANALYSIS_WIDTH, Movement, central_shift, movement, yaw
from core.scaffold.probes import Probe, Prober

KEY_CANDIDATES = ("w", "s", "a", "d", "Up", "Down", "Left", "Right", "space")
HOLD_S = 0.4            # each key is held this long
SETTLE_LIMIT_S = 5.0    # longer than this without a still picture: the game never rests
MOUSE_PX = 60           # one mouse probe's motion (pixels of pointer motion)
MOUSE_PAIRS = 3         # pairs of moves (right, then back) that must agree; the median of the agreeing is kept
MOUSE_PAIRS_MAX = 20    # pairs tried at most (a featureless view, snow or sky, spoils some readings)
MOUSE_REWARM_EVERY = 5  # after this many pairs in a row that were not clean: rest, then wake the mouse again
MOUSE_PAIRS_MIN = 2     # fewer clean pairs than this agreeing with each other: the turn is not written
MOUSE_AGREE = 0.15      # readings within this share of each other agree
REWARM_REST_S = 1.0
WARMUP_S = 8.0          # games swallow mouse motion for a while after they get focus: nudge until the view answers
WARMUP_PX = 20
JUMP_MIN_PX = 2.0       # a jump lifts the picture by at least this (analysed pixels) and brings it back
TURN_SPREAD = 0.15      # without mouse look, corners that agree on a sideways key's angle within this share: it
                        # turns the view (a strafe moves near things more than far ones)

ROLES = ("forward", "back", "strafe_left", "strafe_right", "turn_left", "turn_right", "look_up", "look_down", "jump")
OPPOSITES = (("w", "s"), ("a", "d"), ("Up", "Down"), ("Left", "Right"))   # by convention
PAIR_RETRIES = 2        # opposite keys that alone did not move opposite ways are tried again this often
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


@dataclass(frozen=True)
class MouseLook:
    x_ratio: float | None     # window pixels of picture shift per pixel of mouse near the centre (0: not seen)
    degrees_per_px: float | None   # the camera's turn per pixel of mouse, for the field of view given (None: no
                                   # mouse look found)
    spread: float             # how much the corners disagreed on the turn's angle (a pure turn's baseline)
    invert_y: bool | None     # True: moving the mouse down tilts the view up
    settle_s: float | None
    evidence: str


NO_MOUSE = MouseLook(None, None, 0.0, None, None, "")


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
                             f"{back.describe()} after)", settle)
        return KeyEffect(probe.what, None, f"the picture rose {-peak.ty:.1f} px and came back (crouch?)", settle)
    shown, frame = (end, probe.during[-1].picture) if end.moved else (back, probe.after)
    turned = yaw(probe.before, frame, focal)
    spread = turned.spread if turned is not None else 1.0
    role, how = _direction(shown, spread, turn_spread)
    return KeyEffect(probe.what, role, shown.describe() + how, settle, shown, spread)


def _direction(seen: Movement, spread: float, turn_spread: float) -> tuple[str, str]:
    """(the role, what decided it beyond the fitted motion)."""
    strongest = max(abs(seen.expansion_px), abs(seen.tx), abs(seen.ty))
    if strongest == abs(seen.expansion_px):
        return ("forward" if seen.expansion_px > 0 else "back"), ""
    if strongest == abs(seen.tx):
        side = "left" if seen.tx > 0 else "right"  # the picture moves the other way
        if turn_spread <= 0:
            return f"strafe_{side}", "; a sideways shift (the mouse turns the camera, so taken as a strafe)"
        kind = "turn" if spread <= turn_spread else "strafe"
        why = "a turn" if kind == "turn" else "parallax"
        return f"{kind}_{side}", f"; corners disagree on its angle by {spread:.0%} ({why})"
    return ("look_up" if seen.ty > 0 else "look_down"), ""


def pair_up(first: KeyEffect, second: KeyEffect, turn_spread: float) -> tuple[KeyEffect, KeyEffect]:
    """Two keys that move opposite ways by convention (W and S, A and D, the arrows), judged together when alone
    they do not say opposite things: half their difference is what they do, with what both share (a bobbing
    hand, drift) taken out."""
    a, b = first.seen, second.seen
    if a is None or b is None or "jump" in (first.role, second.role):
        return first, second
    half = replace(a, tx=(a.tx - b.tx) / 2, ty=(a.ty - b.ty) / 2, expansion_px=(a.expansion_px - b.expansion_px) / 2)
    role, how = _direction(half, max(first.spread or 0.0, second.spread or 0.0), turn_spread)
    together = (f"; judged with its opposite: half of {first.key} minus {second.key} is {half.tx:+.1f} px across, "
                f"{half.ty:+.1f} px down, {half.expansion_px:+.1f} px outward{how}")
    return (replace(first, role=role, evidence=first.evidence.split("; ")[0] + together),
            replace(second, role=OPPOSITE_ROLE[role], evidence=second.evidence.split("; ")[0] + together))


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
    for first, second in OPPOSITES:
        if first not in effects or second not in effects or effects[first].role is None \
                or effects[second].role is None:
            continue
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
    for effect in effects.values():
        say(f"  {effect.key:>6}: {effect.role or 'no use found'} ({effect.evidence})")
    return list(effects.values())


def measure_mouse(prober: Prober, focal: float, say: Callable[[str], None]) -> MouseLook:
    """Move the mouse right and back, in pairs, then down and up, and see how far the view turned (`focal` in
    window pixels, for degrees). A pair counts when both halves turned alike and the view came back to where it
    began: a frame drawn late, or motion the game swallowed, then spoils one pair rather than the result."""
    scale = prober.window.width / ANALYSIS_WIDTH
    analysed = focal / scale
    if not _warm_up(prober):
        say("  mouse: the view did not turn for any mouse motion")
        return replace(NO_MOUSE, evidence=f"no mouse motion turned the view within {WARMUP_S:.0f} s")
    ratios: list[float] = []
    degrees: list[float] = []
    spreads: list[float] = []
    settles: list[float] = []
    tried = 0
    unclean = 0
    while tried < MOUSE_PAIRS_MAX and len(_agreeing(degrees)) < MOUSE_PAIRS:
        tried += 1
        if unclean >= MOUSE_REWARM_EVERY:
            # A game still loading its world (Minetest in its first seconds) draws late or swallows motion for a
            # while: one bad spell, not a property of its mouse look.
            time.sleep(REWARM_REST_S)
            _warm_up(prober)
            unclean = 0
        unclean += 1
        right = prober.move_mouse(MOUSE_PX, 0, SETTLE_LIMIT_S)
        left = prober.move_mouse(-MOUSE_PX, 0, SETTLE_LIMIT_S)
        settles += [p.settle_s for p in (right, left) if p.settle_s is not None]
        there, back = yaw(right.before, right.after, analysed), yaw(left.before, left.after, analysed)
        if there is None or back is None:
            continue
        home = yaw(right.before, left.after, analysed)
        turned = _confirmed(there.readings, back.readings, home.degrees if home is not None else 0.0)
        if turned is None:
            continue  # the halves disagree however read, or the view did not come back: not a clean pair
        unclean = 0
        degrees.append(turned / MOUSE_PX)
        spreads.append(max(there.spread, back.spread))
        centre = central_shift(right.before, right.after)
        if centre is not None:
            ratios.append(-centre[0] * scale / MOUSE_PX)  # turning right moves the picture left
    outliers = len(degrees)
    degrees = _agreeing(degrees)  # a pair read wrong (few corners in view) is outvoted, not averaged in
    outliers -= len(degrees)
    if len(degrees) < MOUSE_PAIRS_MIN:
        turns = ", ".join(f"{d * MOUSE_PX:.1f}" for d in degrees)
        evidence = (f"the view turned, but fewer than {MOUSE_PAIRS_MIN} of {tried} pairs of {MOUSE_PX} px right and "
                    f"back turned it alike both ways and alike each other ({turns} deg): not written")
        say(f"  mouse: {evidence}")
        return replace(NO_MOUSE, evidence=evidence)
    down = prober.move_mouse(0, MOUSE_PX // 2, SETTLE_LIMIT_S)
    up = prober.move_mouse(0, -(MOUSE_PX // 2), SETTLE_LIMIT_S)
    tilt = movement(down.before, down.after)
    invert = tilt.ty > 0 if tilt.moved and abs(tilt.ty) > 1.0 else None  # looking down moves the picture up
    settles += [p.settle_s for p in (down, up) if p.settle_s is not None]
    evidence = (f"{len(degrees)} of {tried} pairs of {MOUSE_PX} px right and back turned the view alike both ways "
                f"({', '.join(f'{d * MOUSE_PX:.1f}' for d in degrees)} deg"
                f"{f'; {outliers} disagreeing pair(s) outvoted' if outliers else ''}); "
                f"{MOUSE_PX // 2} px down moved the picture {abs(tilt.ty):.1f} px {'down' if tilt.ty > 0 else 'up'}")
    say(f"  mouse: {evidence}")
    return MouseLook(_median(ratios) or 0.0, _median(degrees), _median(spreads) or 0.0, invert,
                     max(settles) if settles else None, evidence)


def _confirmed(there: tuple[float, ...], back: tuple[float, ...], home: float) -> float | None:
    """The turn of a pair (degrees right), from the first way of reading it on which the turn and its return
    agree within 15%, when the view came back; None when no reading agrees."""
    for right, left in zip(there, back):
        if right > 0.5 and left < -0.5 and abs(right + left) <= 0.15 * right and abs(home) <= 0.15 * right:
            return (right - left) / 2
    return None


def _warm_up(prober: Prober) -> bool:
    """Nudge the mouse right and back until the view answers (games swallow motion just after focus)."""
    deadline = time.monotonic() + WARMUP_S
    sign = 1
    while time.monotonic() < deadline:
        probe = prober.move_mouse(sign * WARMUP_PX, 0, SETTLE_LIMIT_S)
        seen = movement(probe.before, probe.after)
        if seen.moved and abs(seen.u) > 1.0:
            prober.move_mouse(-sign * WARMUP_PX, 0, SETTLE_LIMIT_S)
            return True
        sign = -sign
    return False


def _agreeing(values: list[float]) -> list[float]:
    """The largest group of readings within MOUSE_AGREE of one of them (the first such group on a tie)."""
    best: list[float] = []
    for centre in values:
        group = [v for v in values if abs(v - centre) <= MOUSE_AGREE * abs(centre)]
        if len(group) > len(best):
            best = group
    return best


def _median(values: list[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
