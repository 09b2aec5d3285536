"""Cutting a process's memory into chunks, and running one job per chunk on every core.

A value scan visits the same chunks on every pass: they are planned once, at the first scan,
from the regions that pass the filter, and kept (a region unmapped later simply reads as
nothing). Each worker owns its buffers, so a pass holds a few chunks per worker in memory
whatever the size of the target. process_vm_readv, pread and numpy's comparisons release the
GIL, so the workers really run in parallel.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from core.memory.readers import MemoryReader
from core.memory.regions import Region
from core.memory.scanner import RegionFilter, default_workers

DEFAULT_CHUNK = 16 * 1024 * 1024
T = TypeVar("T")


@dataclass(frozen=True)
class Chunk:
    """Slots [address, address + nslots * step) of one region; reading needs `span` bytes."""

    address: int
    nslots: int
    step: int
    size: int  # value size: the last slot needs size bytes

    @property
    def span(self) -> int:
        return (self.nslots - 1) * self.step + self.size if self.nslots else 0

    def slot_addresses(self, slots: np.ndarray) -> np.ndarray:
        return np.uint64(self.address) + slots.astype(np.uint64) * np.uint64(self.step)


def plan_chunks(reader: MemoryReader, region_filter: RegionFilter, size: int, step: int,
                chunk_size: int = DEFAULT_CHUNK, regions: Iterable[Region] | None = None) -> list[Chunk]:
    chunks: list[Chunk] = []
    per_chunk = max(1, chunk_size // step)
    for region in regions if regions is not None else reader.regions():
        if not region.readable or not region_filter.accepts(region):
            continue
        for start, end in reader.extents(region):
            first = -(-start // step) * step  # the first aligned slot
            total = (end - size - first) // step + 1 if end - first >= size else 0
            for index in range(0, total, per_chunk):
                chunks.append(Chunk(first + index * step, min(per_chunk, total - index), step, size))
    return chunks


def slot_view(data: bytearray | memoryview | np.ndarray, chunk: Chunk, dtype: np.dtype, nslots: int | None = None
              ) -> np.ndarray:
    """The chunk's slots as values, without copying (strided when slots overlap, unaligned ok)."""
    count = chunk.nslots if nslots is None else nslots
    if chunk.step == dtype.itemsize:
        return np.frombuffer(data, dtype=dtype, count=count)
    return np.ndarray(shape=(count,), dtype=dtype, buffer=data, offset=0, strides=(chunk.step,))


def readable_slots(chunk: Chunk, got: int) -> int:
    """How many of the chunk's slots lie wholly inside the `got` bytes that could be read."""
    if got < chunk.size:
        return 0
    return min(chunk.nslots, (got - chunk.size) // chunk.step + 1)


class Workers:
    """A pool that maps a job over chunks; each thread has named, reused buffers."""

    def __init__(self, count: int | None = None) -> None:
        self.count = count or default_workers()
        self._local = threading.local()

    def buffer(self, name: str, size: int) -> bytearray:
        buffers: dict[str, bytearray] = self._local.__dict__.setdefault("buffers", {})
        buffer = buffers.get(name)
        if buffer is None or len(buffer) < size:
            buffer = buffers[name] = bytearray(size)
        return buffer

    def read(self, reader: MemoryReader, chunk: Chunk, name: str = "read") -> tuple[bytearray, int]:
        buffer = self.buffer(name, chunk.span)
        return buffer, reader.read_into(chunk.address, memoryview(buffer)[:chunk.span])

    def map(self, job: Callable[[int, Chunk], T], chunks: list[Chunk]) -> Iterator[T]:
        """job(index, chunk) for every chunk, results in order."""
        if self.count == 1 or len(chunks) <= 1:
            yield from (job(i, c) for i, c in enumerate(chunks))
            return
        with ThreadPoolExecutor(max_workers=self.count, thread_name_prefix="memory-pass") as pool:
            yield from pool.map(job, range(len(chunks)), chunks)
