"""Candidate positions as triples of consecutive float32 values, narrowed by what the player did.

Single-float changed/unchanged rounds stall (FACTS: about 15,000 floats on Minetest), and they
are wrong for positions anyway: walking straight along one axis leaves a coordinate unchanged.
So candidates here are triples: the (a, b, c) at every 4-byte-aligned address. Two tests narrow
them while the whole process is still a candidate:
  still  (the player stood, or only the camera turned): none of the three changed;
  moved  (the player walked): at least one of the three changed;
and each triple must look like coordinates (finite, not subnormal, |v| < 10^7).

State per chunk is a snapshot of the chunk plus a packed bitmask of surviving triple starts,
kept in spill files (core/memory/spill.py): memory stays bounded whatever the target's size.
Once few enough survive, `extract` hands them over to be followed one by one (track.py).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from core.memory.chunks import DEFAULT_CHUNK, Chunk, Workers, plan_chunks, readable_slots
from core.memory.readers import MemoryReader
from core.memory.scanner import RegionFilter
from core.memory.spill import DEFAULT_RAM_BUDGET, RamBudget, SpillFile, Stored, load_pages, store_pages

TRIPLE_BYTES = 12
STEP = 4
MAX_COORDINATE = 1e7
SMALLEST_NORMAL = float(np.finfo(np.float32).tiny)
Test = Literal["first", "still", "moved", "typed"]


@dataclass
class _State:
    count: int = 0
    snapshot: Stored | None = None
    pages: Stored | None = None  # which pages the snapshot holds (spill.store_pages); None = all
    mask: Stored | None = None  # packed triple starts; None = all


def plausible(floats: np.ndarray) -> np.ndarray:
    """Per float: could this be a coordinate? (finite, zero or normal, not astronomically large)."""
    magnitude = np.abs(floats)
    with np.errstate(invalid="ignore"):
        return (magnitude <= MAX_COORDINATE) & ((magnitude >= SMALLEST_NORMAL) | (floats == 0))


def unchanged(now: np.ndarray, before: np.ndarray, relative: float) -> np.ndarray:
    """Per float: equal, or within `relative` × max(1, |value|) (physics may jitter a standing player)."""
    with np.errstate(invalid="ignore", over="ignore"):
        return (now.view(np.uint32) == before.view(np.uint32)) | (
            np.abs(now - before) <= relative * np.maximum(1.0, np.abs(before)))


def any_of_three(per_float: np.ndarray, starts: int) -> np.ndarray:
    return per_float[:starts] | per_float[1:starts + 1] | per_float[2:starts + 2]


def all_of_three(per_float: np.ndarray, starts: int) -> np.ndarray:
    return per_float[:starts] & per_float[1:starts + 1] & per_float[2:starts + 2]


@dataclass
class Extracted:
    addresses: np.ndarray  # uint64 triple starts, ascending
    before: np.ndarray     # (n, 3) float32 at the previous checkpoint
    now: np.ndarray        # (n, 3) float32 at the last checkpoint


class TripleScan:
    """The dense stage: every aligned triple in the filtered regions is a candidate until tested."""

    def __init__(self, reader: MemoryReader, region_filter: RegionFilter | None = None,
                 workspace: Path | None = None, workers: int | None = None, chunk_size: int = DEFAULT_CHUNK,
                 ram_budget: int = DEFAULT_RAM_BUDGET, still_tolerance: float = 1e-5) -> None:
        self.reader = reader
        self.region_filter = region_filter or RegionFilter(perms="rw")
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if workspace is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="pokegym-find-")
            workspace = Path(self._tmp.name)
        self.workspace = workspace
        self.chunk_size = chunk_size
        self.still_tolerance = still_tolerance
        self._pool = Workers(workers)
        self._budget = RamBudget(ram_budget)
        self.chunks: list[Chunk] = []
        self.states: list[_State] = []
        self.previous: list[_State] = []
        self.passes = 0
        self.bytes_read = 0

    @property
    def count(self) -> int:
        return sum(s.count for s in self.states)

    def first(self) -> int:
        """The snapshot every later test compares with: all plausible triples are candidates."""
        self.chunks = plan_chunks(self.reader, self.region_filter, TRIPLE_BYTES, STEP, self.chunk_size)
        return self._pass("first")

    def still(self) -> int:
        return self._pass("still")

    def moved(self) -> int:
        return self._pass("moved")

    def typed(self, values: tuple[float | None, float | None, float | None], tolerance: float) -> int:
        """Keep triples whose components match the values read off the screen (None: any)."""
        self._typed = (values, tolerance)
        return self._pass("typed")

    def _pass(self, test: Test) -> int:
        spill = SpillFile(self.workspace / f"triples-{self.passes}.bin", budget=self._budget)
        previous = self.states if test != "first" else [_State(-1)] * len(self.chunks)
        results = list(self._pool.map(lambda i, c: self._job(test, c, previous[i], spill), self.chunks))
        self.previous, self.states = previous, [state for state, _ in results]
        self.bytes_read += sum(got for _, got in results)
        self.passes += 1
        return self.count

    def _job(self, test: Test, chunk: Chunk, previous: _State, spill: SpillFile) -> tuple[_State, int]:
        if previous.count == 0:
            return _State(), 0
        buffer, got = self._pool.read(self.reader, chunk)
        starts = readable_slots(chunk, got)
        if starts == 0:
            return _State(), got
        floats = np.frombuffer(buffer, np.float32, count=starts + 2)
        keep = all_of_three(plausible(floats), starts)
        if test in ("still", "moved"):
            assert previous.snapshot is not None
            old_bytes = load_pages(previous.snapshot, previous.pages, chunk.span,
                                   self._pool.buffer("previous", chunk.span))
            old = np.frombuffer(old_bytes, np.float32, count=starts + 2)
            same = unchanged(floats, old, self.still_tolerance)
            keep &= all_of_three(same, starts) if test == "still" else any_of_three(~same, starts)
        elif test == "typed":
            values, tolerance = self._typed
            for index, value in enumerate(values):
                if value is not None:
                    column = floats[index:index + starts]
                    with np.errstate(invalid="ignore", over="ignore"):  # NaN and inf in raw memory are normal
                        keep &= np.abs(column - np.float32(value)) <= tolerance
        if previous.mask is not None:
            keep &= np.unpackbits(previous.mask.load(), count=chunk.nslots)[:starts].view(bool)
        count = int(np.count_nonzero(keep))
        if count == 0:
            return _State(), got
        if starts < chunk.nslots:
            keep = np.concatenate([keep, np.zeros(chunk.nslots - starts, dtype=bool)])
        snapshot, pages = store_pages(spill, np.frombuffer(buffer, np.uint8, count=chunk.span))
        mask = None if count == chunk.nslots else spill.append(np.packbits(keep))
        return _State(count, snapshot, pages, mask), got

    def extract(self) -> Extracted:
        """The surviving triples with their values at the last two checkpoints."""
        addresses: list[np.ndarray] = []
        before: list[np.ndarray] = []
        now: list[np.ndarray] = []
        for chunk, state, old in zip(self.chunks, self.states, self.previous):
            if state.count == 0:
                continue
            assert state.snapshot is not None
            mask = np.ones(chunk.nslots, bool) if state.mask is None else \
                np.unpackbits(state.mask.load(), count=chunk.nslots).view(bool)
            slots = np.flatnonzero(mask)
            addresses.append(chunk.slot_addresses(slots))
            now.append(_triples_at(load_pages(state.snapshot, state.pages, chunk.span), slots))
            before.append(_triples_at(load_pages(old.snapshot, old.pages, chunk.span), slots)
                          if old.snapshot is not None else now[-1])
        if not addresses:
            empty = np.zeros((0, 3), np.float32)
            return Extracted(np.zeros(0, np.uint64), empty, empty)
        return Extracted(np.concatenate(addresses), np.concatenate(before), np.concatenate(now))

    def close(self) -> None:
        self.states = self.previous = []
        if self._tmp is not None:
            self._tmp.cleanup()


def _triples_at(snapshot: np.ndarray, slots: np.ndarray) -> np.ndarray:
    floats = np.frombuffer(snapshot, np.float32, count=len(snapshot) // 4)
    return np.stack([floats[slots], floats[slots + 1], floats[slots + 2]], axis=1)
