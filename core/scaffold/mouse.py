"""Mouse look, measured from the game's frames: how far the camera turns per pixel of mouse motion, whether Y is
inverted, and how long the picture takes to rest after a turn.

The reading of a turn is only as good as the tracking of corners from one frame to the next, and a big jump
defeats it: on Minetest's snowfield a 60 px motion (12 deg, 26 analysed pixels) was read as a third of the turn,
or as nothing, in the same run where 10, 20 and 30 px were read within 3% (the game's own yaw, from the test-only
truth mod, said every motion turned it exactly 0.2 deg/px). So the motion is sized from what a small nudge did,
to move the picture a few pixels, and a reading counts only when the turn grows in proportion to the motion:
a misread big jump does not.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Protocol

from core.game.external.inputs import TURN_PIECE_PX
from core.game.external.x11 import WindowInfo
from core.scaffold.motion import ANALYSIS_WIDTH, central_shift, movement, yaw
from core.scaffold.probes import SETTLE_LIMIT_S, Probe

MOUSE_SIZES = (1, 2, 3)    # a round moves the mouse right and back by these multiples of its step
MOUSE_SHIFT_PX = 4.0       # a step is sized to shift the picture's centre about this far (analysed pixels): three
                           # steps stay well under the 26 px the tracker misread
STEP_MIN_PX = 1
TURN_MIN_DEG = 0.5         # a move that turned the view less than this is not read (tracking noise)
MOUSE_LINEAR = 0.10        # each size's turn per pixel within this share of the round's: the turn is proportional
MOUSE_ROUNDS = 2           # rounds whose turn per pixel agree
MOUSE_ROUNDS_MAX = 8       # rounds tried at most
MOUSE_AGREE = 0.10         # rounds within this share of each other agree
REWARM_EVERY = 2           # after this many failed rounds in a row: rest, then wake the mouse again
REWARM_REST_S = 1.0
WARMUP_S = 8.0             # games swallow mouse motion for a while after they get focus: nudge until the view answers
WARMUP_PX = 20


class Mouse(Protocol):
    """What mouse look is measured through: the game's window and moves of its pointer (probes.Prober)."""

    window: WindowInfo

    def move_mouse(self, dx: int, dy: int, settle_limit_s: float) -> Probe: ...


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


@dataclass(frozen=True)
class Round:
    """Moves of 1, 2 and 3 steps right and back whose turns grew in proportion, or why they did not."""

    step: int
    turns: tuple[float, ...]   # degrees right, one per size that turned cleanly
    per_px: float | None       # the turn per pixel of the whole round; None: not clean or not proportional
    why: str = ""
    ratios: tuple[float, ...] = ()
    spreads: tuple[float, ...] = ()
    settles: tuple[float, ...] = ()
    too_small: bool = False    # its first move turned the view too little to read

    def describe(self) -> str:
        sizes = "/".join(str(k * self.step) for k in MOUSE_SIZES)
        turns = ", ".join(f"{t:.2f}" for t in self.turns)
        read = f"{sizes} px: {turns} deg" if turns else f"{sizes} px"
        return read + (f" ({self.why})" if self.why else "")


def measure_mouse(prober: Mouse, focal: float, say: Callable[[str], None]) -> MouseLook:
    """Move the mouse right and back in rounds of 1, 2 and 3 steps, then down and up, and see how far the view
    turned (`focal` in window pixels, for degrees). A round counts when each move's return brought the view back
    by as much and the turns grew in proportion to the motion; a smaller step is tried after one that did not."""
    scale = prober.window.width / ANALYSIS_WIDTH
    analysed = focal / scale
    nudge = _warm_up(prober)
    if nudge is None:
        say("  mouse: the view did not turn for any mouse motion")
        return replace(NO_MOUSE, evidence=f"no mouse motion turned the view within {WARMUP_S:.0f} s")
    # A misread nudge reads short (a wrong stripe is never more than half a stripe away), so this first step is
    # never too small, only too big: a step that fails is halved, unless a bigger one has read cleanly.
    step = max(STEP_MIN_PX, min(TURN_PIECE_PX, round(WARMUP_PX * MOUSE_SHIFT_PX / nudge)))
    rounds: list[Round] = []
    failed = 0
    while len(rounds) < MOUSE_ROUNDS_MAX and len(_agreeing(_readings(rounds))) < MOUSE_ROUNDS:
        if failed >= REWARM_EVERY:
            # A game still loading its world (Minetest in its first seconds) draws late or swallows motion for a
            # while: one bad spell, not a property of its mouse look.
            time.sleep(REWARM_REST_S)
            _warm_up(prober)
            failed = 0
        done = _round(prober, step, analysed, scale)
        rounds.append(done)
        if done.per_px is None:
            failed += 1
            # The biggest moves are the likeliest misread (see the module's docstring), and a big turn misread
            # as almost none cannot be told from a move too small to read: halved. But below a step that has read
            # cleanly, too little turn means too small a move, or a game that ignored the mouse for a moment (a
            # loaded machine: halving through such a spell left 1 px moves, under what is read, in a CI run).
            # A step that turned the view at all, read alike or not, was big enough: a smaller one that reads too
            # little is grown back toward it (a CI run halved 5 px, not read alike, to 2 and 1 px, both too little).
            turned = max((r.step for r in rounds if not r.too_small), default=0)
            step = min(turned, step * 2) if done.too_small and step < turned else max(STEP_MIN_PX, step // 2)
        else:
            failed = 0
    agreeing = _agreeing(_readings(rounds))
    counted = [r for r in rounds if r.per_px in agreeing]
    tried = "; ".join(r.describe() for r in rounds)
    if len(counted) < MOUSE_ROUNDS:
        evidence = (f"the view turned, but fewer than {MOUSE_ROUNDS} of {len(rounds)} rounds of moves right and back "
                    f"turned it in proportion to the motion and alike each other ({tried}): not written")
        say(f"  mouse: {evidence}")
        return replace(NO_MOUSE, evidence=evidence)
    tilt_px = MOUSE_SIZES[1] * counted[-1].step
    down = prober.move_mouse(0, tilt_px, SETTLE_LIMIT_S)
    up = prober.move_mouse(0, -tilt_px, SETTLE_LIMIT_S)
    tilt = movement(down.before, down.after)
    invert = tilt.ty > 0 if tilt.moved and abs(tilt.ty) > 1.0 else None  # looking down moves the picture up
    settles = [s for r in counted for s in r.settles] + [p.settle_s for p in (down, up) if p.settle_s is not None]
    evidence = (f"{len(counted)} of {len(rounds)} rounds of moves right and back turned the view in proportion to "
                f"the motion ({tried}); {tilt_px} px down moved the picture {abs(tilt.ty):.1f} px "
                f"{'down' if tilt.ty > 0 else 'up'}")
    say(f"  mouse: {evidence}")
    return MouseLook(_median([x for r in counted for x in r.ratios]) or 0.0, _median(agreeing),
                     _median([s for r in counted for s in r.spreads]) or 0.0, invert,
                     max(settles) if settles else None, evidence)


def _round(prober: Mouse, step: int, analysed: float, scale: float) -> Round:
    """Moves of each of MOUSE_SIZES steps right and back; stops at the first that did not turn cleanly."""
    turns: list[float] = []
    ratios: list[float] = []
    spreads: list[float] = []
    settles: list[float] = []
    for size in MOUSE_SIZES:
        px = size * step
        right = prober.move_mouse(px, 0, SETTLE_LIMIT_S)
        left = prober.move_mouse(-px, 0, SETTLE_LIMIT_S)
        settles += [p.settle_s for p in (right, left) if p.settle_s is not None]
        there, back = yaw(right.before, right.after, analysed), yaw(left.before, left.after, analysed)
        home = yaw(right.before, left.after, analysed)
        turned = None if there is None or back is None else \
            _confirmed(there.readings, back.readings, home.degrees if home is not None else 0.0)
        if turned is None and not turns and (there is None or max(map(abs, there.readings)) < TURN_MIN_DEG):
            return Round(step, (), None, f"{px} px: too little turn read", too_small=True)
        if there is None or back is None or turned is None:
            return Round(step, tuple(turns), None, f"{px} px: not read alike both ways")
        turns.append(turned)
        spreads.append(max(there.spread, back.spread))
        centre = central_shift(right.before, right.after)
        if centre is not None:
            ratios.append(-centre[0] * scale / px)  # turning right moves the picture left
    per_px = sum(turns) / (step * sum(MOUSE_SIZES))
    if any(abs(turn / (size * step) - per_px) > MOUSE_LINEAR * per_px for turn, size in zip(turns, MOUSE_SIZES)):
        return Round(step, tuple(turns), None, "not in proportion to the motion")
    return Round(step, tuple(turns), per_px, "", tuple(ratios), tuple(spreads), tuple(settles))


def _confirmed(there: tuple[float, ...], back: tuple[float, ...], home: float) -> float | None:
    """The turn of a pair (degrees right), from the first way of reading it on which the turn and its return
    agree within 15%, when the view came back; None when no reading agrees."""
    for right, left in zip(there, back):
        if right > TURN_MIN_DEG and left < -TURN_MIN_DEG and max(abs(right + left), abs(home)) <= 0.15 * right:
            return (right - left) / 2
    return None


def _warm_up(prober: Mouse) -> float | None:
    """Nudge the mouse right and back until the view answers (games swallow motion just after focus); how far
    the nudge shifted the picture (analysed pixels), or None if it never did."""
    deadline = time.monotonic() + WARMUP_S
    sign = 1
    while time.monotonic() < deadline:
        probe = prober.move_mouse(sign * WARMUP_PX, 0, SETTLE_LIMIT_S)
        seen = movement(probe.before, probe.after)
        if seen.moved and abs(seen.u) > 1.0:
            prober.move_mouse(-sign * WARMUP_PX, 0, SETTLE_LIMIT_S)
            return abs(seen.u)
        sign = -sign
    return None


def _readings(rounds: list[Round]) -> list[float]:
    return [r.per_px for r in rounds if r.per_px is not None]


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
