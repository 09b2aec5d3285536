"""Value scans over a live process, read-only, with Cheat Engine's semantics (see values.py).

Candidates are kept per chunk of the target's memory, in whichever form is smaller:
  dense   a snapshot of the chunk's bytes plus a packed bitmask of surviving slots (or all);
  sparse  the surviving slot indexes (uint32) and their values.
Everything lives in spill files in the session's workspace (spill.py) and is read back one
chunk at a time, so a process with 4 GiB of writable memory is scanned with a few chunks per
worker of our own memory. An unknown-initial-value scan is a dense snapshot; later scans turn
chunks sparse as soon as that is smaller.

The first scan's generation is always kept (for "against the first scan"), and so is the one
before the current, for undo.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from core.memory.chunks import DEFAULT_CHUNK, Chunk, Workers, plan_chunks, readable_slots, slot_view
from core.memory.readers import MemoryReader
from core.memory.scanner import RegionFilter
from core.memory.spill import DEFAULT_RAM_BUDGET, RamBudget, SpillFile, Stored, load_pages, store_pages
from core.memory.values import Condition, ScanValueError, ValueType, check_condition, evaluate, value_type


@dataclass
class ChunkState:
    count: int = 0
    snapshot: Stored | None = None  # dense: the chunk's bytes, zero pages left out (spill.store_pages)
    pages: Stored | None = None     # dense: which pages the snapshot holds (None: all)
    mask: Stored | None = None      # dense: packed survivors (None: every slot)
    slots: Stored | None = None     # sparse: uint32 slot indexes, ascending
    values: Stored | None = None    # sparse: their values

    @property
    def dense(self) -> bool:
        return self.snapshot is not None


@dataclass
class Generation:
    number: int
    condition: Condition
    states: list[ChunkState]
    spill: SpillFile
    seconds: float = 0.0
    bytes_read: int = 0

    @property
    def count(self) -> int:
        return sum(state.count for state in self.states)


@dataclass
class _Context:
    """What one chunk's job needs from the generations around it."""

    chunk: Chunk
    previous: ChunkState | None
    first: ChunkState | None
    output: SpillFile
    condition: Condition


@dataclass
class ValueScan:
    reader: MemoryReader
    vtype: ValueType
    aligned: bool = True
    region_filter: RegionFilter = field(default_factory=lambda: RegionFilter(perms="rw"))
    chunk_size: int = DEFAULT_CHUNK
    workspace: Path | None = None
    workers: int | None = None
    ram_budget: int = DEFAULT_RAM_BUDGET

    def __post_init__(self) -> None:
        self._budget = RamBudget(self.ram_budget)
        self._own_workspace = self.workspace is None
        if self.workspace is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="pokegym-scan-")
            self.workspace = Path(self._tmp.name)
        self.workspace.mkdir(parents=True, exist_ok=True)
        self.chunks: list[Chunk] = []
        self.first: Generation | None = None
        self.previous: Generation | None = None  # for undo
        self.current: Generation | None = None
        self._pool = Workers(self.workers)

    @classmethod
    def of_type(cls, reader: MemoryReader, type_name: str, **options: Any) -> ValueScan:
        return cls(reader, value_type(type_name), **options)

    @property
    def step(self) -> int:
        return self.vtype.size if self.aligned else 1

    @property
    def count(self) -> int:
        return self.current.count if self.current else 0

    @property
    def generations(self) -> list[Generation]:
        """The generations kept: first, previous (for undo), current, without repeats."""
        kept: list[Generation] = []
        for generation in (self.first, self.previous, self.current):
            if generation is not None and all(generation is not g for g in kept):
                kept.append(generation)
        return kept

    # -- scanning ---------------------------------------------------------------------------
    def first_scan(self, condition: Condition) -> int:
        check_condition(condition, first=True)
        self.first = self.previous = self.current = None
        self.chunks = plan_chunks(self.reader, self.region_filter, self.vtype.size, self.step, self.chunk_size)
        return self._run(condition, first=True)

    def next_scan(self, condition: Condition) -> int:
        if self.current is None:
            raise ScanValueError("there is no first scan to narrow down: run a first scan")
        check_condition(condition, first=False)
        return self._run(condition, first=False)

    def undo(self) -> int:
        """Return to the candidates before the last next scan (one level, as Cheat Engine)."""
        if self.previous is None:
            raise ScanValueError("nothing to undo: undo goes back one next scan, and only one (the first scan "
                                 "cannot be undone: start a new first scan instead)")
        self.current, self.previous = self.previous, None
        return self.count

    def _run(self, condition: Condition, first: bool) -> int:
        started = time.perf_counter()
        number = self.current.number + 1 if self.current and not first else 0
        assert self.workspace is not None  # __post_init__ made one
        spill = SpillFile(self.workspace / f"gen-{number}-{time.monotonic_ns()}.bin",
                          budget=self._budget)
        previous = None if first else self.current
        base = None if first or not condition.against_first else self.first
        contexts = [_Context(chunk, previous.states[i] if previous else None, base.states[i] if base else None,
                             spill, condition) for i, chunk in enumerate(self.chunks)]
        results = list(self._pool.map(lambda i, chunk: self._chunk_job(contexts[i]), self.chunks))
        generation = Generation(number, condition, [state for state, _ in results], spill,
                                time.perf_counter() - started, sum(got for _, got in results))
        self._push(generation)
        return generation.count

    def _push(self, generation: Generation) -> None:
        # Dropping a generation drops its spill file once nothing refers to it any more
        # (an "unchanged" scan reuses the previous snapshot rather than writing it again).
        if self.first is None:
            self.first = self.current = generation
            self.previous = None
            return
        self.previous, self.current = self.current, generation

    # -- one chunk ---------------------------------------------------------------------------
    def _chunk_job(self, ctx: _Context) -> tuple[ChunkState, int]:
        chunk, previous = ctx.chunk, ctx.previous
        if previous is not None and previous.count == 0:
            return ChunkState(), 0
        buffer, got = self._pool.read(self.reader, chunk)
        readable = readable_slots(chunk, got)
        if readable == 0:
            return ChunkState(), got
        current = slot_view(buffer, chunk, self.vtype.dtype, readable)
        if previous is None:
            keep = evaluate(ctx.condition, self.vtype, current)
            return self._store(ctx, buffer, current, keep, None), got
        if previous.dense:
            assert previous.snapshot is not None
            old_bytes = load_pages(previous.snapshot, previous.pages, chunk.span,
                                   self._pool.buffer("previous", chunk.span))
            survivors = self._unpack(previous, chunk.nslots)
            survivors = survivors[:readable] if survivors is not None else None
            reference = self._reference_dense(ctx, readable, old_bytes)
            keep = evaluate(ctx.condition, self.vtype, current, reference)
            if survivors is not None:
                keep &= survivors
            reuse = previous if ctx.condition.op == "unchanged" and not ctx.condition.against_first else None
            return self._store(ctx, buffer, current, keep, reuse), got
        assert previous.slots is not None and previous.values is not None
        slots = previous.slots.load()
        values = previous.values.load()
        inside = int(np.searchsorted(slots, readable))
        slots, values = slots[:inside], values[:inside]
        now = current[slots]
        reference = values if not ctx.condition.against_first else self._reference_sparse(ctx, slots)
        keep = evaluate(ctx.condition, self.vtype, now, reference if ctx.condition.needs_previous else None)
        return self._sparse(ctx.output, slots[keep], now[keep]), got

    def _reference_dense(self, ctx: _Context, readable: int, old_bytes: np.ndarray) -> np.ndarray | None:
        if not ctx.condition.needs_previous:
            return None
        if not ctx.condition.against_first:
            return slot_view(old_bytes, ctx.chunk, self.vtype.dtype, readable)
        first = ctx.first
        assert first is not None
        if first.dense:
            assert first.snapshot is not None
            first_bytes = load_pages(first.snapshot, first.pages, ctx.chunk.span,
                                     self._pool.buffer("first", ctx.chunk.span))
            return slot_view(first_bytes, ctx.chunk, self.vtype.dtype, readable)
        # The first scan kept few slots: every later survivor is one of them.
        reference = np.zeros(readable, dtype=self.vtype.dtype)
        if first.count:
            assert first.slots is not None and first.values is not None
            slots, values = first.slots.load(), first.values.load()
            inside = slots < readable
            reference[slots[inside]] = values[inside]
        return reference

    def _reference_sparse(self, ctx: _Context, slots: np.ndarray) -> np.ndarray:
        first = ctx.first
        assert first is not None
        if first.dense:
            assert first.snapshot is not None
            first_bytes = load_pages(first.snapshot, first.pages, ctx.chunk.span,
                                     self._pool.buffer("first", ctx.chunk.span))
            return slot_view(first_bytes, ctx.chunk, self.vtype.dtype, ctx.chunk.nslots)[slots]
        assert first.slots is not None and first.values is not None
        first_slots, first_values = first.slots.load(), first.values.load()
        return first_values[np.searchsorted(first_slots, slots)]

    @staticmethod
    def _unpack(state: ChunkState, nslots: int) -> np.ndarray | None:
        if state.mask is None:
            return None
        return np.unpackbits(state.mask.load(), count=nslots).view(bool)

    def _store(self, ctx: _Context, buffer: bytearray, current: np.ndarray, keep: np.ndarray,
               reuse: ChunkState | None) -> ChunkState:
        count = int(np.count_nonzero(keep))
        if count == 0:
            return ChunkState()
        chunk = ctx.chunk
        dense_cost = chunk.span + chunk.nslots // 8
        if count * (4 + self.vtype.size) < dense_cost:
            slots = np.flatnonzero(keep).astype(np.uint32)
            return self._sparse(ctx.output, slots, current[slots])
        if len(keep) < chunk.nslots:
            keep = np.concatenate([keep, np.zeros(chunk.nslots - len(keep), dtype=bool)])
        if reuse is not None:  # unchanged: the surviving slots hold the bytes stored last time
            snapshot, pages = reuse.snapshot, reuse.pages
        else:
            snapshot, pages = store_pages(ctx.output, np.frombuffer(buffer, np.uint8, chunk.span))
        mask = None if count == chunk.nslots else ctx.output.append(np.packbits(keep))
        return ChunkState(count, snapshot=snapshot, pages=pages, mask=mask)

    @staticmethod
    def _sparse(output: SpillFile, slots: np.ndarray, values: np.ndarray) -> ChunkState:
        if not len(slots):
            return ChunkState()
        return ChunkState(len(slots), slots=output.append(slots.astype(np.uint32)),
                          values=output.append(np.ascontiguousarray(values)))

    # -- results -----------------------------------------------------------------------------
    def candidates(self, limit: int | None = None) -> Iterator[tuple[int, float | int]]:
        """(address, value at the last scan) in address order, at most `limit` of them."""
        if self.current is None:
            return
        produced = 0
        for chunk, state in zip(self.chunks, self.current.states):
            if state.count == 0:
                continue
            slots, values = self._slots_and_values(chunk, state)
            for address, value in zip(chunk.slot_addresses(slots).tolist(), values.tolist()):
                yield address, value
                produced += 1
                if limit is not None and produced >= limit:
                    return

    def addresses(self, limit: int | None = None) -> np.ndarray:
        """Candidate addresses as one uint64 array (mind `limit` on a dense set)."""
        parts: list[np.ndarray] = []
        total = 0
        for chunk, state in zip(self.chunks, self.current.states if self.current else []):
            if state.count == 0:
                continue
            slots, _ = self._slots_and_values(chunk, state)
            parts.append(chunk.slot_addresses(slots))
            total += len(slots)
            if limit is not None and total >= limit:
                break
        array = np.concatenate(parts) if parts else np.zeros(0, np.uint64)
        return array if limit is None else array[:limit]

    def _slots_and_values(self, chunk: Chunk, state: ChunkState) -> tuple[np.ndarray, np.ndarray]:
        if not state.dense:
            assert state.slots is not None and state.values is not None
            return state.slots.load(), state.values.load()
        assert state.snapshot is not None
        survivors = self._unpack(state, chunk.nslots)
        slots = np.arange(chunk.nslots, dtype=np.uint32) if survivors is None else np.flatnonzero(survivors)
        view = slot_view(load_pages(state.snapshot, state.pages, chunk.span), chunk, self.vtype.dtype)
        return slots.astype(np.uint32), view[slots]

    def read_now(self, addresses: list[int]) -> list[float | int | None]:
        """Current values at `addresses` (None where unreadable): a read, never a write."""
        out: list[float | int | None] = []
        for address in addresses:
            data = self.reader.read(address, self.vtype.size)
            out.append(np.frombuffer(data, self.vtype.dtype)[0].item() if len(data) == self.vtype.size else None)
        return out

    # -- lifetime ----------------------------------------------------------------------------
    def close(self) -> None:
        files = {id(g.spill): g.spill for g in self.generations}
        for generation in self.generations:
            for state in generation.states:
                for stored in (state.snapshot, state.pages, state.mask, state.slots, state.values):
                    if stored is not None:
                        files[id(stored.file)] = stored.file
        for spill in files.values():
            spill.close()
        self.first = self.previous = self.current = None
        if self._own_workspace:
            self._tmp.cleanup()

    def __enter__(self) -> ValueScan:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
