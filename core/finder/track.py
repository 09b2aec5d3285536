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
    lost (a height still settling while the character stood drops every copy holding it, and keeps a window
    beside them that holds no height)."""

    step: str
    addresses: np.ndarray    # uint64
    before: np.ndarray       # (n, 3)
    after: np.ndarray        # (n, 3)

    def near(self, point: tuple[float, float, float], radius: float) -> np.ndarray:
        """Which rows held, before the step, a triple within `radius` of `point` on every axis."""
        with np.errstate(invalid="ignore"):
            close: np.ndarray = np.abs(self.before - np.asarray(point, np.float32)) <= radius
        return np.all(close, axis=1)


@dataclass
class Tracker:
    reader: MemoryReader
    addresses: np.ndarray     # uint64, ascending
    now: np.ndarray           # (n, 3) values at the last checkpoint
    still_tolerance: float = 1e-5
    moves: list[MoveRecord] = field(default_factory=list[MoveRecord])
    still_checks: int = 0
    drops: list[StillDrop] = field(default_factory=list[StillDrop])

    @property
    def count(self) -> int:
        return len(self.addresses)

    def read(self) -> tuple[np.ndarray, np.ndarray]:
        values, ok = gather_values(self.reader, self.addresses, np.float32, 3)
        return values, ok & plausible(values).all(axis=1)

    def _keep(self, keep: np.ndarray) -> None:
        self.addresses = self.addresses[keep]
        self.now = self.now[keep]
        self.moves = [move.select(keep) for move in self.moves]

    def still(self, step: str = "still") -> int:
        """Checkpoint after a step that must not move the player: drop whatever moved."""
        values, ok = self.read()
        ok &= unchanged(values, self.now, self.still_tolerance).all(axis=1)
        lost = ~ok
        if lost.any() and sum(len(drop.addresses) for drop in self.drops) + int(lost.sum()) <= DROP_LOG_ROWS:
            self.drops.append(StillDrop(step, self.addresses[lost], self.now[lost], values[lost]))
        self.now = values
        self.still_checks += 1
        self._keep(ok)
        return self.count

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
