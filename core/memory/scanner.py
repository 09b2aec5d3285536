"""Scanning a process's memory for an AOB pattern, region by region in bounded chunks.

Chunks overlap by one pattern length so matches that straddle a chunk boundary are
found exactly once; no region is ever read in one allocation larger than the chunk.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from core.memory.pattern import Pattern
from core.memory.readers import MemoryReader
from core.memory.regions import Region

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


@dataclass
class ScanStats:
    bytes_read: int = 0
    regions: int = 0
    seconds: float = 0.0
    unreadable: list[Region] = field(default_factory=list)

    @property
    def gib_per_s(self) -> float:
        return self.bytes_read / (1 << 30) / self.seconds if self.seconds > 0 else 0.0


def find_all(pattern: Pattern, data: bytes | bytearray, end: int | None = None,
             limit: int | None = None) -> list[int]:
    """Every start position of `pattern` in data[:end], overlapping matches included.

    bytes/bytearray.find with an end bound searches the caller's buffer in place: no copy.
    """
    end = len(data) if end is None else end
    found: list[int] = []
    anchor, offset, size = pattern.anchor, pattern.anchor_offset, len(pattern)
    verify = not pattern.literal
    position = data.find(anchor, offset, end - (size - offset - len(anchor)))
    while position != -1:
        start = position - offset
        if not verify or pattern.matches_at(data, start):
            found.append(start)
            if limit is not None and len(found) >= limit:
                break
        position = data.find(anchor, position + 1, end - (size - offset - len(anchor)))
    return found


def scan(reader: MemoryReader, pattern: Pattern, region_filter: RegionFilter | None = None,
         chunk_size: int = DEFAULT_CHUNK, regions: Iterable[Region] | None = None,
         stats: ScanStats | None = None, threads: bool = True) -> list[Match]:
    """Every match of `pattern` in the readable regions that pass `region_filter`.

    With `threads`, reading the next chunk (process_vm_readv and pread release the GIL) overlaps
    with searching the current one, so on two cores a scan costs about max(read, search).
    """
    region_filter = region_filter or RegionFilter()
    stats = stats if stats is not None else ScanStats()
    overlap = len(pattern) - 1
    started = time.perf_counter()
    jobs = []
    for region in regions if regions is not None else reader.regions():
        if not region.readable or not region_filter.accepts(region):
            continue
        stats.regions += 1
        for start, end in reader.extents(region):
            address = start
            while address < end:
                jobs.append((region, address, min(chunk_size + overlap, end - address)))
                address += chunk_size
    matches: list[Match] = []
    buffers = [bytearray(chunk_size + overlap) for _ in range(2)]

    def read(index: int) -> int:
        _, address, size = jobs[index]
        return reader.read_into(address, memoryview(buffers[index % 2])[:size])

    with ThreadPoolExecutor(max_workers=1) as prefetch:
        pending = prefetch.submit(read, 0) if jobs and threads else None
        for index, (region, address, _) in enumerate(jobs):
            got = pending.result() if pending is not None else read(index)
            pending = prefetch.submit(read, index + 1) if threads and index + 1 < len(jobs) else None
            if got == 0:
                stats.unreadable.append(region)
                continue
            stats.bytes_read += got
            # The overlap is one byte shorter than the pattern, so a match is found in the chunk
            # where it starts and never again in the next one.
            matches.extend(Match(address + p, region) for p in find_all(pattern, buffers[index % 2], got))
    stats.seconds += time.perf_counter() - started
    return matches
