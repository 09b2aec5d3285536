"""Checking a profile on a game process: the evaluator's own code finds the block, and the position it
reads must follow the commanded moves (forward and back, right and left, and nothing while the
camera turns or the player stands).

A real-time game on a loaded machine can miss a move: a key pressed and released between two of its frames
is never seen (Minetest beside two busy processes lost one move in eight verifications). A round in which a
move went nowhere is walked once more, and the profile passes only if that round follows every move; a
profile reading the wrong value fails both.

Given the found candidate's `right_turn` (core/finder/ranking.py), or else the profile's `ground_turn` (the
finder writes it from the same measurement), the position read must also turn the same way
from walking forward to strafing right: a signature that, in a fresh process, lands on a window holding the same
values in the other order (on Minetest [z of one object, 1.0, x of the next], between two copies of the position)
reads a mirror image that follows every move as well as the position does. Its x and y are the position's y and
x, and its height a constant; one such profile passed two verifications and then read the wrong axes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from core.evaluation.locate import candidates, read_block
from core.evaluation.profile import BlockInvalid, Profile
from core.finder.motion import Drivable, MotionPlan
from core.finder.ranking import fit, turn_sign
from core.finder.track import MoveRecord
from core.game.pad import PadState
from core.memory.readers import MemoryReader, open_reader
from core.memory.regions import MemoryAccessError

PASS_FIT = 0.8


@dataclass
class VerifyResult:
    ok: bool
    message: str
    pid: int
    blocks: int = 0
    address: int | None = None
    fit: float = 0.0
    speed: float = 0.0
    positions: list[tuple[float, float, float]] = field(default_factory=list[tuple[float, float, float]])
    terms: dict[str, float] = field(default_factory=dict[str, float])
    mismatches: int = 0    # signature bytes that differed where the block was found (within max_mismatches)

    def to_json(self) -> dict[str, object]:
        return {"ok": self.ok, "message": self.message, "pid": self.pid, "blocks": self.blocks,
                "address": self.address, "fit": round(self.fit, 4), "speed": round(self.speed, 4),
                "positions": [list(p) for p in self.positions], "terms": self.terms, "mismatches": self.mismatches}


def verify_profile(game: Drivable, profile: Profile, plan: MotionPlan | None = None,
                   reader: MemoryReader | None = None, expected_speed: float | None = None,
                   expected_right_turn: float | None = None) -> VerifyResult:
    plan = plan or MotionPlan()
    own = reader is None
    try:
        reader = reader if reader is not None else open_reader(game.pid)
    except (ProcessLookupError, MemoryAccessError) as exc:
        return VerifyResult(False, str(exc), game.pid)
    try:
        return _verify(game, profile, plan, reader, expected_speed, expected_right_turn)
    finally:
        if own:
            reader.close()


def mirrored(measured: float | None, expected: float | None) -> bool:
    """Whether two right_turn readings, both clearly measured, turn opposite ways."""
    return turn_sign(measured) * turn_sign(expected) < 0


def _verify(game: Drivable, profile: Profile, plan: MotionPlan, reader: MemoryReader,
            expected_speed: float | None, expected_right_turn: float | None) -> VerifyResult:
    game.hold(PadState(), plan.settle_seconds)
    found = candidates(reader, profile)
    if not found:
        how = "the signature matched nowhere" if profile.pointer is None else "the pointer chain did not resolve"
        return VerifyResult(False, f"no valid block in process {game.pid}: {how} (or every match failed "
                                   "validation)", game.pid)
    address = found[0].address
    positions: list[tuple[float, float, float]] = []

    def where() -> np.ndarray:
        nonlocal address
        if profile.pointer is not None:  # as the evaluator does: follow the pointers every time
            located = candidates(reader, profile)
            if not located:
                raise BlockInvalid("the pointer chain stopped resolving")
            address = located[0].address
        values = read_block(reader, profile, address)
        point = (float(values["x"]), float(values["y"]), float(values.get("z", 0.0)))
        positions.append(point)
        return np.array([point], dtype=np.float64)

    def walk_round() -> VerifyResult | list[MoveRecord]:
        """One round of the plan's moves: their records, or the failure that ended it."""
        moves: list[MoveRecord] = []
        try:
            now = where()
            for step in plan.round_steps():
                game.hold(step.pad, step.seconds)
                game.hold(PadState(), plan.settle_seconds)
                after = where()
                if step.kind == "still" and np.abs(after - now).max() > 1e-3 * max(1.0, float(np.abs(now).max())):
                    return VerifyResult(False, f"the position changed during '{step.name}', when the player should "
                                               "have stood still", game.pid, len(found), address, positions=positions)
                if step.kind == "moved":
                    moves.append(MoveRecord(0, step.name, now, after, None))
                now = after
        except BlockInvalid as exc:
            return VerifyResult(False, f"the block stopped validating while moving: {exc}", game.pid, len(found),
                                address, positions=positions)
        return moves

    def judged(moves: list[MoveRecord]) -> tuple[bool, float, dict[str, np.ndarray], dict[str, float]]:
        score, terms = fit(moves, vertical=2)
        details = {k: round(float(v[0]), 3) for k, v in terms.items() if k != "typical" and not np.isnan(v[0])}
        return float(score[0]) >= PASS_FIT, float(score[0]), terms, details

    walked = walk_round()
    if isinstance(walked, VerifyResult):
        return walked
    ok, score, terms, details = judged(walked)
    missed = ""
    if not ok and details.get("moved", 1.0) < 1.0:
        missed = (f" on a second round (in the first, {1 - details['moved']:.0%} of the moves went nowhere: a "
                  "real-time game can miss a key pressed and released between two of its frames)")
        walked = walk_round()
        if isinstance(walked, VerifyResult):
            return walked
        ok, score, terms, details = judged(walked)
    speed = float(terms["typical"][0]) / plan.move_seconds
    message = (f"the position follows the moves{missed} (fit {score:.2f}, {speed:.2f} units/s)" if ok else
               f"the position does not follow the moves{missed} (fit {score:.2f} < {PASS_FIT}): {details}")
    if ok and expected_speed and not 0.5 <= speed / expected_speed <= 2.0:
        ok = False
        message = f"the position moves at {speed:.3f} units/s, but the found one moved at {expected_speed:.3f}"
    right_turn = float(terms["right_turn"][0])
    expected_from = "the found copy's"
    if expected_right_turn is None and profile.ground_turn is not None:  # what the finder saw, as the file says
        expected_right_turn = -1.0 if profile.ground_turn == "clockwise" else 1.0
        expected_from = f"the profile's ground_turn ({profile.ground_turn})"
    if ok and mirrored(right_turn, expected_right_turn):
        ok = False
        message = (f"the position read is a mirror image of the found one: strafing right turns {right_turn:+.2f} "
                   f"from forward here, against {expected_from} {expected_right_turn:+.2f}. The signature located a "
                   "window holding the same values in another order (x and y swapped), not the found copy; or, if "
                   "the profile was edited by hand (one axis's scale negated), its ground_turn must be flipped too")
    if ok and len(found) > 1:
        message += f"; note: {len(found)} valid blocks matched, the evaluator takes the first"
    if ok and found[0].mismatches:
        message += (f"; {found[0].mismatches} literal byte(s) of the signature differed in this process "
                    "(within max_mismatches)")
    return VerifyResult(ok, message, game.pid, len(found), address, score, speed, positions, details,
                        found[0].mismatches)
