"""Scan state kept on disk, so that scanning a process never holds the process in our RAM.

A value scan keeps, per chunk of the target's memory, either a snapshot of the chunk and a
bitmask of surviving slots, or the surviving slots and their values. All of it is appended to
spill files in the session's workspace and read back chunk by chunk into reused buffers: our
resident memory stays at a few chunks per worker whether the target holds 100 MiB or 4 GiB
(the page cache holds the files, and the kernel may evict it). Writes reserve their place under
a lock and then go out with pwrite, so workers write in parallel.

Writing to the page cache costs about as much as reading the target, and far more when the
disk is busy, so the first `ram_budget` bytes of a session stay in our memory instead
(384 MiB by default: a whole Minetest fits; a 4 GiB emulator spills most of it).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np

if TYPE_CHECKING:
    from typing_extensions import Buffer

DEFAULT_RAM_BUDGET = 384 << 20


def _bytes_of(array: np.ndarray) -> memoryview:
    """The array's memory as bytes, without a copy. (numpy's stubs give ndarray the buffer protocol's
    __buffer__ only from Python 3.12 on; at run time every version has it.)"""
    return memoryview(cast("Buffer", array)).cast("B")


class RamBudget:
    """How many bytes of scan state may stay in memory, shared by a session's spill files."""

    def __init__(self, limit: int = DEFAULT_RAM_BUDGET) -> None:
        self.limit = limit
        self.used = 0
        self._lock = threading.Lock()

    def take(self, nbytes: int) -> bool:
        with self._lock:
            if self.used + nbytes > self.limit:
                return False
            self.used += nbytes
            return True

    def give_back(self, nbytes: int) -> None:
        with self._lock:
            self.used -= nbytes


@dataclass(frozen=True, eq=False)
class Stored:
    """Where one array lies: in memory (`array`), or in a spill file at an offset."""

    file: SpillFile
    offset: int
    count: int
    dtype: str
    array: np.ndarray | None = None

    @property
    def nbytes(self) -> int:
        return self.count * np.dtype(self.dtype).itemsize

    def load(self, into: bytearray | None = None) -> np.ndarray:
        return self.file.load(self, into)


class SpillFile:
    """An append-only file of arrays. Deleted when closed (or when the last reference goes)."""

    def __init__(self, path: Path, create: bool = True, budget: RamBudget | None = None) -> None:
        self.path = Path(path)
        self.budget = budget
        self._in_ram = 0
        flags = os.O_RDWR | (os.O_CREAT | os.O_EXCL if create else 0)
        self._fd = os.open(self.path, flags, 0o600)
        self._size = os.fstat(self._fd).st_size
        self._lock = threading.Lock()
        self.keep = not create  # a file loaded from a saved session is not ours to delete

    @property
    def size(self) -> int:
        return self._size

    def append(self, array: np.ndarray, to_disk: bool = False, owned: bool = False) -> Stored:
        """Store `array` (copied, unless `owned`: the caller hands over an array nobody else uses)."""
        data = np.ascontiguousarray(array)
        nbytes = data.nbytes
        if not to_disk and self.budget is not None and self.budget.take(nbytes):
            with self._lock:
                self._in_ram += nbytes
            return Stored(self, -1, int(data.size), data.dtype.str, data if owned else data.copy())
        with self._lock:
            offset = self._size
            self._size += nbytes
        view = _bytes_of(data) if nbytes else memoryview(b"")
        written = 0
        while written < nbytes:
            written += os.pwrite(self._fd, view[written:], offset + written)
        return Stored(self, offset, int(data.size), data.dtype.str)

    def load(self, stored: Stored, into: bytearray | None = None) -> np.ndarray:
        """The stored array (never to be modified); read from disk into `into` (reused between chunks)
        when it is given and large enough."""
        if stored.array is not None:
            return stored.array
        nbytes = stored.nbytes
        if into is not None and len(into) >= nbytes:
            target = memoryview(into)[:nbytes]
            array = np.frombuffer(into, dtype=stored.dtype, count=stored.count)
        else:
            array = np.empty(stored.count, dtype=stored.dtype)
            target = _bytes_of(array)
        got = 0
        while got < nbytes:
            step = os.preadv(self._fd, [target[got:]], stored.offset + got)
            if step == 0:
                raise OSError(f"scan state file {self.path} is shorter than expected (truncated?)")
            got += step
        return array

    def close(self) -> None:
        if self.budget is not None and self._in_ram:
            self.budget.give_back(self._in_ram)
            self._in_ram = 0
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
            if not self.keep:
                self.path.unlink(missing_ok=True)

    def __del__(self) -> None:
        self.close()


PAGE = 4096


def store_pages(spill: SpillFile, data: np.ndarray) -> tuple[Stored, Stored | None]:
    """Store a snapshot without its zero pages (most of a typical process: 86% of the built-in world's,
    45% of the bench target's), which are neither written nor read back. Returns the non-zero pages
    and a packed bitmap of which pages they are (None: every page, nothing left out)."""
    whole = len(data) // PAGE * PAGE
    pages = cast("np.ndarray", data[:whole].view(np.uint64).reshape(-1, PAGE // 8).any(axis=1))  # one per row
    if len(data) > whole:
        pages = np.append(pages, True)  # a partial last page is always kept
    if pages.all():
        return spill.append(data), None
    full = whole // PAGE
    kept = np.flatnonzero(pages[:full])
    compact = data[:whole].reshape(full, PAGE)[kept].reshape(-1)  # one copy, which the store keeps
    if len(data) > whole:
        compact = np.concatenate([compact, data[whole:]])
    return spill.append(compact, owned=True), spill.append(np.packbits(pages))


def load_pages(data: Stored, pages: Stored | None, length: int, into: bytearray | None = None) -> np.ndarray:
    """The snapshot of `length` bytes stored by store_pages, rebuilt (into `into` when it is big enough)."""
    if pages is None:
        return data.load(into)
    out = np.frombuffer(into, np.uint8, count=length) if into is not None and len(into) >= length \
        else np.empty(length, np.uint8)
    out[:] = 0
    present = np.flatnonzero(np.unpackbits(pages.load(), count=-(-length // PAGE)))
    if len(present):
        stored = data.load()
        full = length // PAGE
        whole = present[present < full]
        out[:full * PAGE].reshape(full, PAGE)[whole] = stored[:len(whole) * PAGE].reshape(-1, PAGE)
        if len(whole) < len(present):  # the partial last page
            out[full * PAGE:] = stored[len(whole) * PAGE:len(whole) * PAGE + length - full * PAGE]
    return out
