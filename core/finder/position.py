"""Finding where a game keeps the player's position, by moving the player and watching memory.

    finder = PositionFinder(game)            # game: anything with pid and hold(pad, seconds)
    result = finder.run(progress=..., cancel=...)
    result.candidates[0].address             # the best (x, y, z) triple

The first round narrows the whole process densely (triples.py) until few enough candidates are
left to follow one by one (track.py); the following rounds are recorded and ranked (ranking.py).
A value read off the screen (`typed`) narrows to the matching triples in one pass instead, and
one round of movement then orders them.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import numpy as np

from core.finder.motion import Drivable, FinderError, MotionPlan, Pacer, Progress, Step
from core.finder.ranking import RankedTriple, rank
from core.finder.track import StillDrop, Tracker
from core.finder.triples import TripleScan
from core.game.pad import PadState
from core.memory.readers import MemoryReader, open_reader
from core.memory.scanner import RegionFilter

MAX_DENSE_ROUNDS = 2
WEAK_SCORE = 0.5   # the true position scored 0.65 to 0.9 on every game tried; junk left by a failed walk, 0.13 to 0.31
# Below this the best is noise: an OpenArena player stuck inside a wall, who never moved, left 0.00 to 0.001.
STILL_SCORE = 0.1
ON_STACK_WEIGHT = 0.5   # a function's local copy of the position: gone when the function returns
BLOCKED = ("was the character blocked, in a menu, or is the game window without input focus? Start in open ground "
           "and try again")


@dataclass
class FinderOptions:
    plan: MotionPlan = field(default_factory=MotionPlan)
    region_filter: RegionFilter = field(default_factory=lambda: RegionFilter(perms="rw"))
    sparse_limit: int = 300_000     # follow candidates one by one below this many
    top: int = 20
    workers: int | None = None
    workspace: Path | None = None


@dataclass
class PositionResult:
    candidates: list[RankedTriple]
    seconds: float
    narrowing: list[tuple[str, int]]   # (step, candidates left) in order
    bytes_read: int
    drops: list[StillDrop] = field(default_factory=list[StillDrop])   # what the sparse stage's still steps dropped

    def dropped_near(self, point: tuple[float, float, float], radius: float) -> list[str]:
        """The still steps that dropped triples holding about `point` (stored units and order), each with a few
        of them: where a position's copies were lost, when the search ranked none."""
        said: list[str] = []
        for drop in self.drops:
            rows = np.flatnonzero(drop.near(point, radius))
            if len(rows):
                shown = "; ".join(f"{int(drop.addresses[i]):#x} ({_floats(drop.before[i])}) -> "
                                  f"({_floats(drop.after[i])})" for i in rows[:3])
                said.append(f"{drop.step}: {len(rows)} dropped, e.g. {shown}")
        return said

    @property
    def warning(self) -> str | None:
        """What to try when even the best candidate fits the moves poorly: then it is most likely not the position."""
        if not self.candidates or self.candidates[0].score >= WEAK_SCORE:
            return None
        if self.candidates[0].score < STILL_SCORE:
            return (f"the best candidate scores only {self.candidates[0].score:.2f}: nothing walked like a position in "
                    "any walk, so most likely the character did not move at all. Check that the walk keys move it "
                    "where the start puts it (stuck inside a wall or the floor, a menu, chat or console open, the "
                    "window without input focus): watch it in the studio's Live view, or with `python main.py world "
                    "--backend FILE` and the game's own position command")
        return (f"the best candidate scores only {self.candidates[0].score:.2f} (a position found reliably scores "
                f"{WEAK_SCORE} or more), so it is most likely not the position. Usual causes: the character still "
                "moves when a step ends (a game with momentum: raise the backend's step_settle_s), walls or slopes "
                "stop the walks (start in open, flat ground), or the window lost input focus")

    def to_json(self) -> dict[str, object]:
        return {"candidates": [c.to_json() for c in self.candidates], "seconds": round(self.seconds, 2),
                "narrowing": [{"step": s, "candidates": n} for s, n in self.narrowing],
                "bytes_read": self.bytes_read, "warning": self.warning}


@dataclass
class Typed:
    """Values read off the screen, in the order shown (None: not shown), and how they map to memory."""

    values: tuple[float | None, float | None, float | None]
    tolerance: float
    scale: float = 1.0   # memory holds shown value × scale (Minetest: 10)


def without_pointer_halves(reader: MemoryReader, candidates: list[RankedTriple]) -> list[RankedTriple]:
    """Leave out triples one of whose floats is the low half of a pointer: its 8-byte aligned word points into the
    process's memory. Such a float moves in small steps as the pointer walks along an array, and a pointer that
    cycles (libc's rand() state, advanced a fixed number of times per tick) can come back to the same value at
    every standing check: CI once met (0, 0, -17169) in libc's data that way, with a character that never moved.
    A coordinate is never half a pointer: the word after it would have to hold 0x00007fxx or 0x000055xx."""
    if not candidates:
        return candidates
    regions = [(r.start, r.end) for r in reader.regions()]
    kept: list[RankedTriple] = []
    for candidate in candidates:
        words = [candidate.address + 4 * k for k in range(3) if (candidate.address + 4 * k) % 8 == 0]
        try:
            raw = reader.read(words[0], words[-1] + 8 - words[0]) if words else b""
        except OSError:
            raw = b""  # unreadable now: ranked on what was read before
        pointers = [int.from_bytes(raw[w - words[0]:w - words[0] + 8], "little") for w in words
                    if len(raw) >= w - words[0] + 8]
        if not any(start <= value < end for value in pointers for start, end in regions):
            kept.append(candidate)
    return kept


def demote_stack_copies(reader: MemoryReader, candidates: list[RankedTriple]) -> list[RankedTriple]:
    """Halve the score of triples on the main thread's stack and rank again. A local copy there walks like the
    position while the function that holds it runs (Red Eclipse's network code kept one, and it ranked first),
    but no signature or pointer can reach it in a fresh process."""
    stacks = [(r.start, r.end) for r in reader.regions() if r.path.startswith("[stack")]
    if not stacks:
        return candidates
    for candidate in candidates:
        on_stack = any(start <= candidate.address < end for start, end in stacks)
        candidate.terms["on_stack"] = float(on_stack)
        if on_stack:
            candidate.score *= ON_STACK_WEIGHT
    return sorted(candidates, key=lambda c: -c.score)


class PositionFinder:
    def __init__(self, game: Drivable, reader: MemoryReader | None = None,
                 options: FinderOptions | None = None) -> None:
        self.game = game
        self.options = options or FinderOptions()
        self._own_reader = reader is None
        self.reader = reader if reader is not None else open_reader(game.pid)

    def run(self, progress: Progress | None = None, cancel: threading.Event | None = None,
            typed: Typed | None = None) -> PositionResult:
        plan, options = self.options.plan, self.options
        steps = plan.round_steps()
        rounds = 1 if typed else plan.rounds
        pacer = Pacer(progress, cancel, len(steps) * (rounds + (0 if typed else 1)) + 1)
        started = time.perf_counter()
        narrowing: list[tuple[str, int]] = []
        scan = TripleScan(self.reader, options.region_filter, options.workspace, options.workers)
        tracker: Tracker | None = None
        try:
            self._settle()
            count = scan.first()
            narrowing.append(("snapshot", count))
            if typed is not None:
                scaled = tuple(None if v is None else v * typed.scale for v in typed.values)
                count = scan.typed(cast("tuple[float | None, float | None, float | None]", scaled),  # three, as typed
                                   typed.tolerance * abs(typed.scale))
                narrowing.append(("typed", count))
                if count == 0:
                    raise FinderError("no three consecutive floats match the values typed in; check the values "
                                      "and their order, and try --scale (Minetest stores node units × 10)")
                tracker = self._follow(scan)
            pacer.step("snapshot", count)
            round_number, recorded = 0, 0
            while recorded < rounds:
                for step in steps:
                    if tracker is None:
                        count, tracker = self._dense_step(scan, step, round_number)
                    else:
                        count = self._sparse_step(tracker, step, round_number)
                    narrowing.append((f"{step.name} (round {round_number + 1})", count))
                    if count == 0:
                        moves = len(tracker.moves) if tracker is not None else 0
                        raise FinderError(self._nothing_left(step, moves))
                    pacer.step(f"{step.name}, round {round_number + 1}", count)
                if tracker is not None:
                    recorded += 1
                elif round_number + 1 >= MAX_DENSE_ROUNDS:
                    raise FinderError(f"{count} candidates were still left after {MAX_DENSE_ROUNDS} rounds of "
                                      "movement; narrow the regions searched (--perms, --path-contains) or type "
                                      "in a coordinate read off the screen")
                round_number += 1
        finally:
            scan.close()
        assert tracker is not None
        candidates = demote_stack_copies(self.reader, without_pointer_halves(
            self.reader, rank(tracker.addresses, tracker.now, tracker.moves, plan.move_seconds, options.top)))
        if not candidates:
            raise FinderError(self._never_walked(tracker.count, len(tracker.moves)))
        return PositionResult(candidates, time.perf_counter() - started, narrowing,
                              scan.bytes_read, tracker.drops)

    def _settle(self) -> None:
        self.game.hold(PadState(), self.options.plan.settle_seconds)

    def _follow(self, scan: TripleScan) -> Tracker:
        extracted = scan.extract()
        return Tracker(self.reader, extracted.addresses, extracted.now)

    def _dense_step(self, scan: TripleScan, step: Step, round_number: int) -> tuple[int, Tracker | None]:
        self.game.hold(step.pad, step.seconds)
        self._settle()
        if step.kind == "still":
            return scan.still(), None
        count = scan.moved()
        if count > self.options.sparse_limit:
            return count, None
        extracted = scan.extract()
        tracker = Tracker(self.reader, extracted.addresses, extracted.now)
        tracker.record_dense_move(round_number, step.name, extracted.before)
        return count, tracker

    def _sparse_step(self, tracker: Tracker, step: Step, round_number: int) -> int:
        self.game.hold(step.pad, step.seconds)
        end = tracker.sample_end() if step.kind == "moved" else None
        self._settle()
        if step.kind == "still":
            return tracker.still(f"{step.name} (round {round_number + 1})")
        return tracker.moved(round_number, step.name, end)

    @staticmethod
    def _nothing_left(step: Step, moves: int) -> str:
        if step.kind == "moved":
            return f"no candidate moved during '{step.name}': {BLOCKED}"
        if moves <= 1:
            # What changed during the first walk then changed again while standing: noise, which is
            # what is left when the walk itself moved nothing.
            return (f"nothing that changed during the first walk stayed still during '{step.name}': most likely "
                    f"the character did not move at all ({BLOCKED}); otherwise it drifts while standing")
        return (f"every candidate changed during '{step.name}', when the character should have stood still: "
                "does the character drift (on a slope, in water), or does turning the camera move it?")

    @staticmethod
    def _never_walked(count: int, walks: int) -> str:
        return (f"{count} value(s) stayed still whenever the character stood, but none moved in at least half of "
                f"the {walks} walks, as a position would: most likely the character did not move at all, or walls "
                f"stopped most walks ({BLOCKED}); what changed was something else, written once")

    def close(self) -> None:
        if self._own_reader:
            self.reader.close()


def _floats(values: np.ndarray) -> str:
    return ", ".join(f"{value:g}" for value in values.tolist())
