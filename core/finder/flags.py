"""Finding quest flags: bytes that change exactly when an interaction happens, and never otherwise.

    finder = FlagFinder(reader)
    finder.start()                     # snapshot
    ...play without interacting...;    finder.idle()        # drop whatever changed
    ...talk to someone...;             finder.happened("talked_baker")
    ...talk to them again...;          finder.idle()        # the flag is set already: no change now
    ...play on...;                     finder.idle()
    finder.results()                   # ranked flag words, with the bit each interaction set

Every byte of writable memory is a candidate at first. An idle round drops every byte that
changed since the previous round (timers, animation, the position while walking); a mark
records which still-quiet bytes changed since the previous round. Repeating idle rounds and
interactions separates flags (changed at marks only) from noise that merely happened to change
at a mark: noise changes again in some idle round and is dropped. Repeating an interaction that
sets nothing new (talking to the same person again) is the best idle round of all: it makes the
game do everything an interaction does (dialogue boxes, text, sounds) except set the flag. State per chunk is a snapshot
and a packed "never changed while idle" mask in spill files, so memory stays bounded.
"""

from __future__ import annotations

import itertools
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core.memory.chunks import DEFAULT_CHUNK, Chunk, Workers, plan_chunks, readable_slots
from core.memory.readers import MemoryReader
from core.memory.scanner import RegionFilter
from core.memory.spill import DEFAULT_RAM_BUDGET, RamBudget, SpillFile, Stored, load_pages, store_pages

WORD = 8


@dataclass
class _Event:
    mark: int
    offsets: np.ndarray   # uint32 byte offsets in the chunk that changed at the mark
    words: np.ndarray     # uint32 offsets of their aligned 8-byte words
    before: np.ndarray    # uint64 word values before the mark
    after: np.ndarray     # uint64 word values after it

    def keep(self, quiet: np.ndarray) -> _Event | None:
        still = quiet[self.offsets]
        if not still.any():
            return None
        offsets = self.offsets[still]
        words = np.isin(self.words, offsets & ~np.uint32(WORD - 1))
        return _Event(self.mark, offsets, self.words[words], self.before[words], self.after[words])


@dataclass
class _ChunkState:
    snapshot: Stored | None = None
    pages: Stored | None = None          # which pages the snapshot holds (spill.store_pages); None = all
    quiet: Stored | None = None          # packed: never changed while idle (None: all so far)
    events: list[_Event] = field(default_factory=list[_Event])


@dataclass
class FlagChange:
    mark: int
    label: str
    before: int
    after: int

    @property
    def bits_set(self) -> list[int]:
        return [b for b in range(64) if (self.after & ~self.before) >> b & 1]

    @property
    def bits_cleared(self) -> list[int]:
        return [b for b in range(64) if (self.before & ~self.after) >> b & 1]


@dataclass
class FlagCandidate:
    address: int          # 8-byte aligned word
    changes: list[FlagChange]
    score: float
    value: int            # the word now

    def to_json(self) -> dict[str, object]:
        return {"address": self.address, "address_hex": f"{self.address:#x}", "score": round(self.score, 3),
                "value": self.value, "changes": [
                    {"mark": c.mark, "label": c.label, "before": c.before, "after": c.after,
                     "bits_set": c.bits_set, "bits_cleared": c.bits_cleared} for c in self.changes]}

    def bit_names(self) -> dict[int, str]:
        """Bit of the 64-bit word -> the label of the interaction that set it."""
        names: dict[int, str] = {}
        for change in self.changes:
            for bit in change.bits_set:
                names.setdefault(bit, change.label)
        return names

    def field(self) -> dict[str, object]:
        """The narrowest flags field holding every changed bit: a 32-bit half of the word if one
        suffices (bits renumbered from it), else the whole 64-bit word."""
        changed = 0
        for change in self.changes:
            changed |= change.before ^ change.after
        names = self.bit_names()
        for half, rest in ((0, changed >> 32), (32, changed & 0xFFFF_FFFF)):
            if changed and rest == 0:
                return {"address": self.address + half // 8, "type": "flags32",
                        "bits": {b - half: n for b, n in names.items() if half <= b < half + 32}}
        return {"address": self.address, "type": "flags64", "bits": names}


class FlagFinder:
    def __init__(self, reader: MemoryReader, region_filter: RegionFilter | None = None,
                 workspace: Path | None = None, workers: int | None = None, chunk_size: int = DEFAULT_CHUNK,
                 ram_budget: int = DEFAULT_RAM_BUDGET) -> None:
        self.reader = reader
        self.region_filter = region_filter or RegionFilter(perms="rw")
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if workspace is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="pokegym-flags-")
            workspace = Path(self._tmp.name)
        self.workspace = workspace
        self.chunk_size = chunk_size
        self._pool = Workers(workers)
        self._budget = RamBudget(ram_budget)
        self.chunks: list[Chunk] = []
        self.states: list[_ChunkState] = []
        self.labels: list[str] = []
        self.idle_rounds = 0
        self._passes = 0

    def start(self) -> int:
        self.chunks = plan_chunks(self.reader, self.region_filter, 1, 1, self.chunk_size)
        self.states = [_ChunkState() for _ in self.chunks]
        self.labels, self.idle_rounds = [], 0
        self._pass("start")
        return sum(c.nslots for c in self.chunks)

    def idle(self) -> int:
        """Nothing was interacted with since the last call: whatever changed is not a flag."""
        self._require_start()
        self.idle_rounds += 1
        return self._pass("idle")

    def happened(self, label: str | None = None) -> int:
        """An interaction happened since the last call (the user marks it): record what changed."""
        self._require_start()
        self.labels.append(label or f"interaction {len(self.labels) + 1}")
        return self._pass("mark")

    def _require_start(self) -> None:
        if not self.chunks:
            raise RuntimeError("start() the flag search first")

    def _pass(self, kind: str) -> int:
        spill = SpillFile(self.workspace / f"flags-{self._passes}.bin", budget=self._budget)
        self._passes += 1
        mark = len(self.labels) - 1
        self.states = list(self._pool.map(lambda i, c: self._job(kind, mark, c, self.states[i], spill), self.chunks))
        return self.candidates_left()

    def _job(self, kind: str, mark: int, chunk: Chunk, state: _ChunkState, spill: SpillFile) -> _ChunkState:
        buffer, got = self._pool.read(self.reader, chunk)
        count = readable_slots(chunk, got)
        now = np.frombuffer(buffer, np.uint8, count=chunk.nslots)
        if count < chunk.nslots:  # unreadable now: nothing there can be a flag
            now = now.copy()
        snapshot, pages = store_pages(spill, now[:chunk.nslots])
        new = _ChunkState(snapshot, pages, state.quiet, list(state.events))
        if kind == "start" or state.snapshot is None:
            return new
        old = load_pages(state.snapshot, state.pages, chunk.nslots, self._pool.buffer("previous", chunk.nslots))
        changed = now != old
        changed[count:] = True
        quiet = None if state.quiet is None else np.unpackbits(state.quiet.load(), count=chunk.nslots).view(bool)
        if kind == "idle":
            quiet = ~changed if quiet is None else quiet & ~changed
            new.quiet = spill.append(np.packbits(quiet))
            new.events = [kept for e in state.events if (kept := e.keep(quiet)) is not None]
        else:
            hits = changed if quiet is None else changed & quiet
            offsets = np.flatnonzero(hits).astype(np.uint32)
            words = np.unique(offsets & ~np.uint32(WORD - 1))
            words = words[words + WORD <= chunk.nslots]
            if len(words):
                columns = words[:, None].astype(np.int64) + np.arange(WORD)
                before = np.ascontiguousarray(old[columns]).view(np.uint64)[:, 0]
                after = np.ascontiguousarray(now[columns]).view(np.uint64)[:, 0]
                new.events.append(_Event(mark, offsets, words, before, after))
        return new

    def candidates_left(self) -> int:
        """Bytes that changed at some mark and never while idle."""
        total = 0
        for state in self.states:
            total += len(np.unique(np.concatenate([e.offsets for e in state.events]))) if state.events else 0
        return total

    def results(self, top: int = 20) -> list[FlagCandidate]:
        words: dict[int, list[FlagChange]] = {}
        for chunk, state in zip(self.chunks, self.states):
            for event in state.events:
                for word, before, after in zip(event.words.tolist(), event.before.tolist(), event.after.tolist()):
                    words.setdefault(chunk.address + word, []).append(
                        FlagChange(event.mark, self.labels[event.mark], before, after))
        candidates: list[FlagCandidate] = []
        maps = sorted((r.start, r.end) for r in self.reader.regions())
        starts = np.array([a for a, _ in maps], dtype=np.uint64)

        def mapped(value: int) -> bool:
            index = int(np.searchsorted(starts, np.uint64(value), side="right")) - 1
            return index >= 0 and maps[index][0] <= value < maps[index][1]

        for word, changes in words.items():
            current = self.reader.read(word, WORD)
            value = int.from_bytes(current.ljust(WORD, b"\0"), "little")
            changes.sort(key=lambda c: c.mark)
            pointer = any(mapped(v) for c in changes for v in (c.before, c.after) if v >= 0x10000)
            candidates.append(FlagCandidate(word, changes, self._score(changes, pointer), value))
        candidates.sort(key=lambda c: (-c.score, c.address))
        return candidates[:top]

    def _score(self, changes: list[FlagChange], pointer: bool) -> float:
        """Flags set a bit or two at a mark and keep them; counters step by one; noise changes many
        bits, or flips the same bit back and forth (a blinking cursor, a '0'/'1' digit)."""
        marks = max(1, len(self.labels))
        coverage = len(changes) / marks
        bitlike = float(np.mean([min(1.0, 2.0 / max(1, bin(c.before ^ c.after).count("1"))) for c in changes]))
        flipped_back = any(later.bits_cleared and set(later.bits_cleared) & set(earlier.bits_set)
                           for i, earlier in enumerate(changes) for later in changes[i + 1:])
        # The rest of a flags word holds still between marks; a word whose other bytes moved in between
        # (they were dropped as noise, but the word kept changing) is something busier.
        steady = all(later.before == earlier.after for earlier, later in itertools.pairwise(changes))
        # Progress sets flags far more often than it clears them.
        sets = sum(len(c.bits_set) for c in changes)
        mostly_set = sets >= sum(len(c.bits_cleared) for c in changes)
        quiet_rounds = min(1.0, self.idle_rounds / 3)
        # `pointer`: the word pointed into the game's mappings: objects get reallocated at interactions
        # too, and flags never look like addresses.
        return (coverage * (0.4 + 0.6 * bitlike) * (0.5 if flipped_back else 1.0) * (1.0 if steady else 0.6)
                * (1.0 if mostly_set else 0.8) * (0.4 if pointer else 1.0) * (0.5 + 0.5 * quiet_rounds))

    def close(self) -> None:
        self.states = []
        if self._tmp is not None:
            self._tmp.cleanup()
