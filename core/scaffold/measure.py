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
MOUSE_TRIES = 4         # +, -, +, -: the median is kept
WARMUP_S = 8.0          # games swallow mouse motion for a while after they get focus: nudge until the view answers
WARMUP_PX = 20
JUMP_MIN_PX = 2.0       # a jump lifts the picture by at least this (analysed pixels) and brings it back
TURN_SPREAD = 0.15      # corners that agree on a turn's angle within this share: a key that turns the view (a
                        # strafe moves near things more than far ones); raised to twice the mouse's own

ROLES = ("forward", "back", "strafe_left", "strafe_right", "turn_left", "turn_right", "look_up", "look_down", "jump")


@dataclass(frozen=True)
class KeyEffect:
    key: str
    role: str | None     # one of ROLES, or None: no use found
    evidence: str        # how it was measured, for the file's comment
    settle_s: float | None


@dataclass(frozen=True)
class MouseLook:
    x_ratio: float | None     # window pixels of picture shift per pixel of mouse, near the centre (None: no turn)
    degrees_per_px: float | None   # the camera's turn per pixel of mouse, for the field of view given
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
        if self.mouse.settle_s is not None and self.mouse.x_ratio is not None:
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
    role = _direction(shown)
    evidence = shown.describe()
    if role == "sideways":
        turned = yaw(probe.before, frame, focal)
        spread = turned.spread if turned is not None else 1.0
        kind = "turn" if spread <= turn_spread else "strafe"
        role = f"{kind}_left" if shown.tx > 0 else f"{kind}_right"  # the picture moves the other way
        evidence += f"; corners disagree on its angle by {spread:.0%} ({'a turn' if kind == 'turn' else 'parallax'})"
    return KeyEffect(probe.what, role, evidence, settle)


def _direction(seen: Movement) -> str:
    strongest = max(abs(seen.expansion_px), abs(seen.tx), abs(seen.ty))
    if strongest == abs(seen.expansion_px):
        return "forward" if seen.expansion_px > 0 else "back"
    if strongest == abs(seen.tx):
        return "sideways"
    return "look_up" if seen.ty > 0 else "look_down"


def measure_keys(prober: Prober, keys: tuple[str, ...], focal: float, mouse: MouseLook,
                 say: Callable[[str], None]) -> list[KeyEffect]:
    """Hold each key in turn and say what it did; `focal` in window pixels."""
    analysed = focal * ANALYSIS_WIDTH / prober.window.width
    turn_spread = max(TURN_SPREAD, 2 * mouse.spread) if mouse.x_ratio is not None else TURN_SPREAD
    effects: list[KeyEffect] = []
    for key in keys:
        effect = classify(prober.press(key, HOLD_S, SETTLE_LIMIT_S), analysed, turn_spread)
        say(f"  {key:>6}: {effect.role or 'no use found'} ({effect.evidence})")
        effects.append(effect)
    return effects


def measure_mouse(prober: Prober, focal: float, say: Callable[[str], None]) -> MouseLook:
    """Move the mouse right and left, then down and up, and see how far the picture turned (`focal` in window
    pixels, for degrees)."""
    scale = prober.window.width / ANALYSIS_WIDTH
    analysed = focal / scale
    if not _warm_up(prober):
        say("  mouse: the view did not turn for any mouse motion")
        return replace(NO_MOUSE, evidence=f"no mouse motion turned the view within {WARMUP_S:.0f} s")
    ratios: list[float] = []
    degrees: list[float] = []
    spreads: list[float] = []
    settles: list[float] = []
    for sign in (1, -1) * (MOUSE_TRIES // 2):
        probe = prober.move_mouse(sign * MOUSE_PX, 0, SETTLE_LIMIT_S)
        centre = central_shift(probe.before, probe.after)
        if centre is not None and abs(centre[0]) > 1.0:
            ratios.append(-centre[0] * scale / (sign * MOUSE_PX))  # turning right moves the picture left
        turned = yaw(probe.before, probe.after, analysed)
        if turned is not None and abs(turned.degrees) > 0.5:
            degrees.append(turned.degrees / (sign * MOUSE_PX))
            spreads.append(turned.spread)
        if probe.settle_s is not None:
            settles.append(probe.settle_s)
    down = prober.move_mouse(0, MOUSE_PX // 2, SETTLE_LIMIT_S)
    up = prober.move_mouse(0, -(MOUSE_PX // 2), SETTLE_LIMIT_S)
    tilt = movement(down.before, down.after)
    invert = tilt.v > 0 if tilt.moved and abs(tilt.v) > 1.0 else None  # looking down moves the picture up
    settles += [p.settle_s for p in (down, up) if p.settle_s is not None]
    evidence = (f"{len(ratios)} of {MOUSE_TRIES} moves of {MOUSE_PX} px across shifted the picture's centre "
                f"({', '.join(f'{r:.2f}' for r in ratios)} px per px); {MOUSE_PX // 2} px down moved it "
                f"{tilt.v:+.1f} px")
    say(f"  mouse: {evidence}")
    return MouseLook(_median(ratios), _median(degrees), _median(spreads) or 0.0, invert,
                     max(settles) if settles else None, evidence)


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


def _median(values: list[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
