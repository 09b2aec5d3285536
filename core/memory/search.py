"""Finding an AOB pattern in a buffer, outside the GIL where the platform allows it.

The pattern's longest literal run (its anchor) is looked for with glibc's `memmem`, called
through ctypes: ctypes releases the GIL for the length of each call, so several threads can
search separate chunks at once, and glibc's memmem runs at several GiB/s on an 8-byte needle
(`bytes.find` manages about 2 GiB/s and holds the GIL). The wildcard bytes are checked only
where the anchor occurs. Where an anchor is so common that calling memmem once per hit would
cost more than the search itself (one- or two-byte anchors in zeroed memory), the rest of the
chunk is searched with numpy comparisons instead, which also run outside the GIL.

Windows' C runtime has no memmem: there the search falls back to `bytearray.find` in place.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from collections.abc import Callable
from typing import cast

import numpy as np

from core.memory.pattern import Pattern

Buffer = bytes | bytearray | memoryview

# After this many anchor hits in one buffer, per-hit calls cost more than a vectorised pass.
_HITS_BEFORE_VECTORISING = 512


def _load_memmem() -> Callable[[int, int, bytes, int], int | None] | None:
    if sys.platform == "win32":
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        function = libc.memmem
    except (OSError, AttributeError):
        return None
    function.restype = ctypes.c_void_p
    function.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]
    return function


_MEMMEM = _load_memmem()


def native_search_available() -> bool:
    """True where the search runs outside the GIL (memmem found in the C library)."""
    return _MEMMEM is not None


def _address_of(data: Buffer) -> tuple[int, object] | None:
    """The buffer's address, and the object that keeps the address valid, or None if read-only."""
    if isinstance(data, bytes):
        return None
    view = memoryview(data)
    if view.readonly or not view.contiguous:
        return None
    holder = (ctypes.c_char * view.nbytes).from_buffer(view)
    return ctypes.addressof(holder), holder


def find_all(pattern: Pattern, data: Buffer, end: int | None = None, limit: int | None = None,
             native: bool = True) -> list[int]:
    """Every start position of `pattern` in data[:end], overlapping matches included, in order."""
    end = len(data) if end is None else min(end, len(data))
    last_start = end - len(pattern)  # the last position a whole match fits at
    if last_start < 0:
        return []
    if not pattern.anchor:
        return _vectorised(pattern, data, 0, last_start, limit)
    located = _address_of(data) if native and _MEMMEM is not None else None
    if located is None:
        return _with_find(pattern, data, last_start, limit)
    address, holder = located
    try:
        return _with_memmem(pattern, data, address, last_start, limit)
    finally:
        del holder


def _with_memmem(pattern: Pattern, data: Buffer, address: int, last_start: int, limit: int | None) -> list[int]:
    found: list[int] = []
    anchor, offset, verify = pattern.anchor, pattern.anchor_offset, not pattern.anchor_is_whole
    search_from = offset                         # anchor positions, not match starts
    search_end = last_start + offset + len(anchor)
    hits = 0
    memmem = cast("Callable[[int, int, bytes, int], int | None]", _MEMMEM)  # present: the caller checked
    while search_from + len(anchor) <= search_end:
        hit = memmem(address + search_from, search_end - search_from, anchor, len(anchor))
        if hit is None:
            break
        position = hit - address
        start = position - offset
        if not verify or pattern.matches_at(data, start):
            found.append(start)
            if limit is not None and len(found) >= limit:
                return found
        hits += 1
        search_from = position + 1
        if hits >= _HITS_BEFORE_VECTORISING and last_start - start > 4096:
            remaining = None if limit is None else limit - len(found)
            return found + _vectorised(pattern, data, start + 1, last_start, remaining)
    return found


def _with_find(pattern: Pattern, data: Buffer, last_start: int, limit: int | None) -> list[int]:
    """The portable path: bytes/bytearray.find searches the caller's buffer in place, no copy."""
    if isinstance(data, memoryview):
        data = data.obj if isinstance(data.obj, (bytes, bytearray)) and data.nbytes == len(data.obj) else bytes(data)
    found: list[int] = []
    anchor, offset, verify = pattern.anchor, pattern.anchor_offset, not pattern.anchor_is_whole
    stop = last_start + offset + len(anchor)
    position = data.find(anchor, offset, stop)
    hits = 0
    while position != -1:
        start = position - offset
        if not verify or pattern.matches_at(data, start):
            found.append(start)
            if limit is not None and len(found) >= limit:
                break
        hits += 1
        if hits >= _HITS_BEFORE_VECTORISING and last_start - start > 4096:
            remaining = None if limit is None else limit - len(found)
            return found + _vectorised(pattern, data, start + 1, last_start, remaining)
        position = data.find(anchor, position + 1, stop)
    return found


def _vectorised(pattern: Pattern, data: Buffer, first: int, last: int, limit: int | None) -> list[int]:
    """Match starts in [first, last], found with numpy: candidates for the first constrained byte,
    then narrowed byte by byte. For dense anchors and nibble-only patterns."""
    if last < first:
        return []
    array = np.frombuffer(data, dtype=np.uint8)
    count = last - first + 1
    constrained = [(i, v, m) for i, (v, m) in enumerate(zip(pattern.values, pattern.masks)) if m]
    # Narrow with the most selective bytes first: whole non-zero bytes, then nibbles, zeros last
    # (zeroed memory would make a first pass on a zero byte keep nearly every position).
    constrained.sort(key=lambda item: (item[2] != 0xFF, item[1] == 0))
    index, value, mask = constrained[0]
    window = array[first + index:first + index + count]
    starts = np.flatnonzero((window & mask) == value if mask != 0xFF else window == value) + first
    for index, value, mask in constrained[1:]:
        if not len(starts):
            break
        column = array[starts + index]
        starts = starts[((column & mask) if mask != 0xFF else column) == value]
    result = starts.tolist()
    return result if limit is None else result[:limit]
