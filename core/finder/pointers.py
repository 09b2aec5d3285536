"""Reverse pointer scan: static pointer chains from a module to a found address.

Where no heap signature survives a restart, a chain of pointers from a module's static data
(.data or .bss of the executable or a library) often does: [[[module + offset] + o1] + o2] + o3.
The scan works backwards from the target, one level per pass over the writable memory: level 1
is every aligned pointer-sized value v with target - max_offset <= v <= target; level 2 every
value pointing just below a level-1 slot; and so on to `depth`. A slot inside a module's static
data closes a chain. Each level keeps at most `max_nodes` slots (the nearest first), so memory
stays bounded.

A chain found in one process means little (FACTS: 149 found on Minetest, 0 resolved in a fresh
process), so `keep_resolving` keeps only those that land on the value in other processes too.

The shortest chain of all has no pointer: a copy of the value in a module's static data itself
(`static_copies`), read at module + offset (`chain: []`). A game that keeps its player in a
global, or copies the position into one for its renderer, has such a root; it is proposed first.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from core.evaluation.locate import follow_chain, module_base
from core.memory.chunks import DEFAULT_CHUNK, Chunk, Workers, plan_chunks, readable_slots
from core.memory.readers import MemoryReader
from core.memory.regions import Region
from core.memory.scanner import RegionFilter

_ANONYMOUS_KINDS = ("", "[heap]", "[stack]", "[anon")
PER_VALUE = 4
TRIPLE = 12          # bytes of the value a static copy must hold
MAX_STATIC = 64      # static copies kept (a value of zeros could match a whole .bss)


@dataclass(frozen=True)
class PointerChain:
    module: str
    offset: int             # of the static slot from the module's base
    chain: tuple[int, ...]  # offsets added after each dereference; the last lands on the target

    def describe(self) -> str:
        if not self.chain:
            return f'"{self.module}"+{self.offset:#x} (static, no pointer)'
        steps = " → ".join(f"+{o:#x}" for o in self.chain)
        return f'"{self.module}"+{self.offset:#x} → {steps}'

    def to_profile(self) -> dict[str, object]:
        return {"module": self.module, "offset": self.offset, "chain": list(self.chain)}

    def resolve(self, reader: MemoryReader, regions: list[Region] | None = None) -> int | None:
        base = module_base(regions if regions is not None else reader.regions(), self.module)
        if base is None:
            return None
        return follow_chain(reader, base + self.offset, list(self.chain))


@dataclass(frozen=True)
class StaticArea:
    start: int
    end: int
    module: str
    base: int


def static_areas(regions: list[Region]) -> list[StaticArea]:
    """Writable data of modules: file-backed rw mappings, and the anonymous .bss right after one."""
    areas: list[StaticArea] = []
    bases: dict[str, int] = {}
    previous: Region | None = None
    owner: str | None = None
    for region in sorted(regions, key=lambda r: r.start):
        named = bool(region.path) and not region.path.startswith(_ANONYMOUS_KINDS[1:]) and \
            not region.path.startswith("/dev/shm") and not region.path.startswith("/memfd:")
        if named:
            owner = region.path
            bases[owner] = min(bases.get(owner, region.start), region.start)
        elif not (region.path == "" and previous is not None and previous.end == region.start and owner):
            owner = None
        if owner is not None and "w" in region.perms and region.readable:
            areas.append(StaticArea(region.start, region.end, os.path.basename(owner), bases[owner]))
        previous = region
    return areas


def reverse_scan(reader: MemoryReader, target: int, depth: int = 4, max_offset: int = 0x1000,
                 max_nodes: int = 200_000, region_filter: RegionFilter | None = None,
                 progress: Callable[[int, int], None] | None = None, workers: int | None = None,
                 chunk_size: int = DEFAULT_CHUNK) -> list[PointerChain]:
    """Chains of at most `depth` pointers, each offset at most `max_offset`, from module data to target."""
    regions = reader.regions()
    areas = static_areas(regions)
    area_starts = np.array([a.start for a in areas], dtype=np.uint64)
    chunks = plan_chunks(reader, region_filter or RegionFilter(perms="rw"), 8, 8, chunk_size, regions)
    pool = Workers(workers)
    # links[level][slot] = [(address of level - 1 it leads to, offset), ...]; level 0 is the target.
    links: list[dict[int, list[tuple[int, int]]]] = [{}]
    targets = np.array([target], dtype=np.uint64)
    chains: list[PointerChain] = []
    for level in range(1, depth + 1):
        low, high = int(targets[0]) - max_offset, int(targets[-1])

        def job(_: int, chunk: Chunk, targets: np.ndarray = targets, low: int = low,
                high: int = high) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            buffer, got = pool.read(reader, chunk)
            count = readable_slots(chunk, got)
            values = np.frombuffer(buffer, np.uint64, count=count)
            near = np.flatnonzero((values >= np.uint64(max(0, low))) & (values <= np.uint64(high)))
            pointed = values[near]
            # Every target within max_offset above the value (at most PER_VALUE, nearest first):
            # keeping only the nearest would lose a chain whenever another slot sits closer.
            first = np.searchsorted(targets, pointed, side="left")
            last = np.searchsorted(targets, pointed + np.uint64(max_offset), side="right")
            counts = np.minimum(last - first, PER_VALUE)
            has = counts > 0
            near, pointed, first, counts = near[has], pointed[has], first[has], counts[has]
            repeat = np.repeat(np.arange(len(near)), counts)
            within = np.arange(len(repeat)) - np.repeat(np.cumsum(counts) - counts, counts)
            slots = chunk.slot_addresses(near[repeat].astype(np.uint32))
            return slots, pointed[repeat].copy(), targets[first[repeat] + within]

        parts = list(pool.map(job, chunks))
        slots = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.uint64)
        values = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, np.uint64)
        below = np.concatenate([p[2] for p in parts]) if parts else np.zeros(0, np.uint64)
        offsets = below - values  # each slot holds (the address it leads to) - offset
        order = np.argsort(offsets, kind="stable")[:max_nodes]
        level_links: dict[int, list[tuple[int, int]]] = {}
        for slot, pointed_at, offset in zip(slots[order].tolist(), below[order].tolist(), offsets[order].tolist()):
            if slot == pointed_at:
                continue
            area = _area_of(areas, area_starts, slot)
            if area is not None:
                for rest in _paths(links, level - 1, pointed_at):
                    chains.append(PointerChain(area.module, slot - area.base, (offset, *rest)))
                continue
            level_links.setdefault(slot, []).append((pointed_at, offset))
        links.append(level_links)
        if progress is not None:
            progress(level, len(chains))
        if not level_links:
            break
        targets = np.array(sorted(level_links), dtype=np.uint64)
    chains = list(dict.fromkeys(chains))
    chains.sort(key=lambda c: (len(c.chain), sum(c.chain), c.module, c.offset))
    return chains


def _area_of(areas: list[StaticArea], starts: np.ndarray, address: int) -> StaticArea | None:
    index = int(np.searchsorted(starts, np.uint64(address), side="right")) - 1
    if index >= 0 and areas[index].start <= address < areas[index].end:
        return areas[index]
    return None


def _paths(links: list[dict[int, list[tuple[int, int]]]], level: int, slot: int,
           limit: int = 16) -> list[tuple[int, ...]]:
    """Offset sequences from `slot`, a slot of `level`, down to the target (level 0)."""
    if level == 0:
        return [()]
    paths: list[tuple[int, ...]] = []
    for pointed_at, offset in links[level].get(slot, []):
        for rest in _paths(links, level - 1, pointed_at, limit):
            paths.append((offset, *rest))
            if len(paths) >= limit:
                return paths
    return paths


def static_copies(reader: MemoryReader, target: int, regions: list[Region] | None = None) -> list[PointerChain]:
    """Roots with no pointer: 4-byte-aligned places in modules' static data holding the value at `target` now
    (its first TRIPLE bytes), the target itself included if it lies there. Whether they follow the value is
    for the caller to check, by moving."""
    regions = regions if regions is not None else reader.regions()
    value = reader.read(target, TRIPLE)
    if len(value) != TRIPLE:
        return []
    roots: list[PointerChain] = []
    for area in static_areas(regions):
        data = reader.read(area.start, area.end - area.start)
        at = data.find(value)
        while at >= 0 and len(roots) < MAX_STATIC:
            if (area.start + at) % 4 == 0:
                roots.append(PointerChain(area.module, area.start + at - area.base, ()))
            at = data.find(value, at + 1)
    return roots


def keep_resolving(chains: list[PointerChain], reader: MemoryReader, target: int) -> list[PointerChain]:
    """The chains that lead to `target` in the process behind `reader` (another run of the game); a static root
    (no pointer) also where it holds the same value as `target`: a copy the game keeps in step."""
    regions = reader.regions()
    value = reader.read(target, TRIPLE)
    kept: list[PointerChain] = []
    for chain in chains:
        where = chain.resolve(reader, regions)
        if where == target or (not chain.chain and where is not None and reader.read(where, TRIPLE) == value):
            kept.append(chain)
    return kept
