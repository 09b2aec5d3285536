"""The sparse stage: a few hundred thousand candidate triples at most, each followed through every step.

Values are read with one call per run of nearby pages (core/memory/gather.py), so a real-time
game is sampled the moment a move ends: copies that lag behind the player show it then.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from core.finder.triples import plausible, unchanged
from core.memory.gather import gather_values
from core.memory.readers import MemoryReader


@dataclass
class MoveRecord:
    """One walking step, per candidate: before it, the moment it ended, and once settled."""

    round: int
    name: str
    before: np.ndarray        # (n, 3)
    after: np.ndarray         # (n, 3)
    end: np.ndarray | None    # (n, 3), None when the step was still tested densely

    def select(self, keep: np.ndarray) -> MoveRecord:
        return MoveRecord(self.round, self.name, self.before[keep], self.after[keep],
                          None if self.end is None else self.end[keep])


# Rows of dropped triples kept for diagnosis (StillDrop), over a whole search: the sparse stage follows a few
# hundred thousand triples at most, and a still step drops a fraction of them.
DROP_LOG_ROWS = 400_000


@dataclass
class StillDrop:
    """Triples a still step dropped, with their values before and after it: where a position's true copies were
    lost, if they ever are (STILL_STRIKES)."""

    step: str
    addresses: np.ndarray    # uint64
    before: np.ndarray       # (n, 3)
    after: np.ndarray        # (n, 3)

    def near(self, point: tuple[float, float, float], radius: float) -> np.ndarray:
        """Which rows held, before the step, a triple within `radius` of `point` on every axis."""
        with np.errstate(invalid="ignore"):
            close: np.ndarray = np.abs(self.before - np.asarray(point, np.float32)) <= radius
        return np.all(close, axis=1)


# Still steps in which a triple may change before it is dropped. One change of one float is forgiven: a character
# still landing when a stand begins (a step down at the end of a walk) changes the height of every true copy of the
# position, and nothing else, while a window beside them that holds no height ([z, 1.0, x] between two of Minetest's
# vec4 copies) stays still; dropping at the first change left only that mirror to rank, twice in CI. A triple with
# two or three floats changed is dropped at once; one changing in every still step (a timer) at its second.
STILL_STRIKES = 2
# A walk as a position makes it, for forgiving a change in a still step: at least WALK_AT_LEAST units (a third of
# the slowest walk the ranking calls plausible, 0.05 units a second for 0.6 s; a double's low half read as a float
# moved 1.5e-4) and this share of the values' size, at most WALK_AT_MOST units (a leap).
WALK_AT_LEAST = 0.01
WALK_SHARE = 1e-4
WALK_AT_MOST = 1e5


@dataclass
class Tracker:
    reader: MemoryReader
    addresses: np.ndarray     # uint64, ascending
    now: np.ndarray           # (n, 3) values at the last checkpoint
    still_tolerance: float = 1e-5
    moves: list[MoveRecord] = field(default_factory=list[MoveRecord])
    still_checks: int = 0
    drops: list[StillDrop] = field(default_factory=list[StillDrop])
    strikes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint8))  # still steps each triple changed in

    def __post_init__(self) -> None:
        if len(self.strikes) != len(self.addresses):
            self.strikes = np.zeros(len(self.addresses), np.uint8)

    @property
    def count(self) -> int:
        return len(self.addresses)

    def read(self) -> tuple[np.ndarray, np.ndarray]:
        values, ok = gather_values(self.reader, self.addresses, np.float32, 3)
        return values, ok & plausible(values).all(axis=1)

    def _keep(self, keep: np.ndarray) -> None:
        self.addresses = self.addresses[keep]
        self.now = self.now[keep]
        self.strikes = self.strikes[keep]
        self.moves = [move.select(keep) for move in self.moves]

    def still(self, step: str = "still") -> int:
        """Checkpoint after a step that must not move the player: drop whatever moved in STILL_STRIKES of them (or
        can no longer be read)."""
        values, ok = self.read()
        changed_floats = (~unchanged(values, self.now, self.still_tolerance)).sum(axis=1)
        # Forgiven once: one float changed (a height settling while the ground coordinates stay), in a triple that
        # walked like a position in the walk before. Anything else that changed is dropped.
        self.strikes = self.strikes + (changed_floats > 0).astype(np.uint8)
        forgivable = (changed_floats <= 1) & self._walked_last()
        ok &= (changed_floats == 0) | (forgivable & (self.strikes < STILL_STRIKES))
        lost = ~ok
        if lost.any() and sum(len(drop.addresses) for drop in self.drops) + int(lost.sum()) <= DROP_LOG_ROWS:
            self.drops.append(StillDrop(step, self.addresses[lost], self.now[lost], values[lost]))
        self.now = values
        self.still_checks += 1
        self._keep(ok)
        return self.count

    def _walked_last(self) -> np.ndarray:
        """Which triples moved in the last walk as a position does: by a step (not a rounding's worth of their
        values, as a double's low half does) and not by a leap."""
        if not self.moves:
            return np.zeros(self.count, bool)
        last = self.moves[-1]
        with np.errstate(invalid="ignore", over="ignore"):
            distance = np.linalg.norm(last.after.astype(np.float64) - last.before.astype(np.float64), axis=1)
            scale = np.maximum(1.0, np.abs(last.before.astype(np.float64)).max(axis=1))
            walked: np.ndarray = ((distance >= np.maximum(WALK_AT_LEAST, WALK_SHARE * scale))
                                  & (distance <= WALK_AT_MOST))
        return walked

    def sample_end(self) -> np.ndarray:
        """Values the moment a move ends, before the settle (not a checkpoint)."""
        values, _ = self.read()
        return values

    def moved(self, round_number: int, name: str, end: np.ndarray | None) -> int:
        """Checkpoint after a walking step, once settled; recorded for ranking."""
        values, ok = self.read()
        self.moves.append(MoveRecord(round_number, name, self.now, values, end))
        self.now = values
        self._keep(ok)
        return self.count

    def record_dense_move(self, round_number: int, name: str, before: np.ndarray) -> None:
        """The move that made the candidates few enough to follow: its values came from snapshots."""
        self.moves.append(MoveRecord(round_number, name, before, self.now.copy(), None))

    def prune(self, keep: np.ndarray) -> None:
        self._keep(keep)
