"""Scanning a process's memory for an AOB pattern, region by region in bounded chunks.

Chunks overlap by one pattern length so matches that straddle a chunk boundary are
found exactly once; no region is ever read in one allocation larger than the chunk.
The search itself is in core/memory/search.py.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from core.memory.pattern import Pattern
from core.memory.readers import MemoryReader
from core.memory.regions import Region
from core.memory.search import find_all
from core.memory.tolerant import find_tolerant, split_parts

DEFAULT_CHUNK = 16 * 1024 * 1024
_SKIPPED_MAPPINGS = ("[vvar]", "[vsyscall]", "[vvar_vclock]")


@dataclass(frozen=True)
class RegionFilter:
    perms: str = "r"                 # every listed permission letter must be present
    path_contains: str | None = None
    min_size: int = 0
    max_size: int | None = None

    def accepts(self, region: Region) -> bool:
        if region.path in _SKIPPED_MAPPINGS:
            return False
        if any(letter not in region.perms for letter in self.perms):
            return False
        if self.path_contains is not None and self.path_contains not in region.path:
            return False
        if region.size < self.min_size:
            return False
        return self.max_size is None or region.size <= self.max_size


@dataclass(frozen=True)
class Match:
    address: int
    region: Region
    mismatches: int = 0   # literal bytes that differed (only a scan with a tolerance finds such matches)


@dataclass
class ScanStats:
    bytes_read: int = 0
    regions: int = 0
    seconds: float = 0.0
    unreadable: list[Region] = field(default_factory=list[Region])

    @property
    def gib_per_s(self) -> float:
        return self.bytes_read / (1 << 30) / self.seconds if self.seconds > 0 else 0.0


def default_workers() -> int:
    return max(1, min(os.cpu_count() or 1, 8))


def scan(reader: MemoryReader, pattern: Pattern, region_filter: RegionFilter | None = None,
         chunk_size: int = DEFAULT_CHUNK, regions: Iterable[Region] | None = None,
         stats: ScanStats | None = None, threads: bool = True, workers: int | None = None,
         tolerance: int = 0) -> list[Match]:
    """Every match of `pattern` in the readable regions that pass `region_filter`, in address order;
    with a `tolerance`, also the places where up to that many literal bytes differ (core/memory/tolerant.py).

    Chunks are read and searched by a pool of workers, one buffer each: process_vm_readv, pread
    and the memmem search all run outside the GIL, so every core reads and searches at once.
    Memory stays at one chunk per worker whatever the size of the process.
    """
    region_filter = region_filter or RegionFilter()
    stats = stats if stats is not None else ScanStats()
    overlap = len(pattern) - 1
    parts = split_parts(pattern, tolerance) if tolerance else []
    started = time.perf_counter()
    jobs: list[tuple[Region, int, int]] = []
    for region in regions if regions is not None else reader.regions():
        if not region.readable or not region_filter.accepts(region):
            continue
        stats.regions += 1
        for start, end in reader.extents(region):
            address = start
            while address < end:
                jobs.append((region, address, min(chunk_size + overlap, end - address)))
                address += chunk_size
    count = (workers or default_workers()) if threads else 1
    local = threading.local()

    def search(job: tuple[Region, int, int]) -> tuple[Region, int, int, list[tuple[int, int]]]:
        region, address, size = job
        buffer = getattr(local, "buffer", None)
        if buffer is None:
            buffer = local.buffer = bytearray(chunk_size + overlap)
        got = reader.read_into(address, memoryview(buffer)[:size])
        # The overlap is one byte shorter than the pattern, so a match is found in the chunk
        # where it starts and never again in the next one.
        if not got:
            return region, address, got, []
        if parts:
            return region, address, got, find_tolerant(pattern, tolerance, parts, buffer, got)
        return region, address, got, [(position, 0) for position in find_all(pattern, buffer, got)]

    matches: list[Match] = []
    if count == 1:
        results = map(search, jobs)
        for region, address, got, found in results:
            _collect(stats, matches, region, address, got, found)
    else:
        with ThreadPoolExecutor(max_workers=count, thread_name_prefix="memory-scan") as pool:
            for region, address, got, found in pool.map(search, jobs):
                _collect(stats, matches, region, address, got, found)
    stats.seconds += time.perf_counter() - started
    return matches


def _collect(stats: ScanStats, matches: list[Match], region: Region, address: int, got: int,
             found: list[tuple[int, int]]) -> None:
    if got == 0:
        if not stats.unreadable or stats.unreadable[-1] is not region:
            stats.unreadable.append(region)
        return
    stats.bytes_read += got
    matches.extend(Match(address + position, region, wrong) for position, wrong in found)
