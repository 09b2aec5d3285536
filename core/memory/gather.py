"""Reading many scattered values at once: coalesce their pages into runs, read each run once.

Used once candidates are few enough to follow individually (thousands to millions of them):
reading the pages they sit on costs a fraction of a full pass, so a real-time game can be
sampled the moment a move ends.
"""

from __future__ import annotations

import itertools

import numpy as np

from core.memory.readers import MemoryReader

PAGE = 4096
_MAX_RUN = 1 << 20
_GAP = 2 * PAGE  # read through small gaps rather than issue another call


def gather(reader: MemoryReader, addresses: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """(n, size) uint8 bytes at each address, and a bool array of which reads succeeded.

    `addresses` must be sorted ascending (candidates always are)."""
    count = len(addresses)
    out = np.zeros((count, size), dtype=np.uint8)
    ok = np.zeros(count, dtype=bool)
    if count == 0:
        return out, ok
    addresses = addresses.astype(np.uint64, copy=False)
    starts = addresses & ~np.uint64(PAGE - 1)
    ends = addresses + np.uint64(size)
    # Runs break where the next value starts well past this one's end, and at every MiB boundary
    # (which bounds a run's length); values are sorted, so this is all vectorised.
    mib = np.uint64(20)
    breaks = np.flatnonzero((addresses[1:] > ends[:-1] + np.uint64(_GAP))
                            | ((addresses[1:] >> mib) != (addresses[:-1] >> mib))) + 1
    bounds = [0, *breaks.tolist(), count]
    buffer = bytearray(_MAX_RUN + 2 * PAGE + size)
    for first, stop in itertools.pairwise(bounds):
        run_start = int(starts[first])
        length = int(ends[stop - 1]) - run_start
        got = reader.read_into(run_start, memoryview(buffer)[:length])
        if got < length:
            # Part of the run is unmapped now: read the values one by one so the rest still count.
            for i in range(first, stop):
                data = reader.read(int(addresses[i]), size)
                if len(data) == size:
                    out[i] = np.frombuffer(data, np.uint8)
                    ok[i] = True
            continue
        array = np.frombuffer(buffer, np.uint8, count=length)
        offsets = (addresses[first:stop] - np.uint64(run_start)).astype(np.int64)
        out[first:stop] = array[offsets[:, None] + np.arange(size)]
        ok[first:stop] = True
    return out, ok


def gather_values(reader: MemoryReader, addresses: np.ndarray, dtype: str | np.dtype | type[np.generic],
                  per_address: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(n, per_address) values of `dtype` at each address (NaN / 0 where unreadable), and the ok mask."""
    dtype = np.dtype(dtype)
    raw, ok = gather(reader, addresses, dtype.itemsize * per_address)
    values = raw.view(dtype).reshape(len(addresses), per_address)
    return values, ok
