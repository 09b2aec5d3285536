"""Frames in shared memory: a double-buffered slot pair guarded by sequence counters.

The writer fills the slot that does not hold the newest frame, bumping that slot's
sequence counter to an odd value before writing and to an even value after. A reader
picks the slot with the newest complete frame and checks the counter again after it
has used the pixels, so it can tell whether the writer touched them in the meantime.
That gives zero-copy reads (a numpy view on the mapping) that are never torn: either
the view was intact for its whole use, or the reader learns it was not and retries.

Layout (little-endian), version 1:
    0   u32 magic 'PGFR'      4  u32 layout version   8  u32 width   12 u32 height
    16  u32 slot count (2)    20 u32 reserved
    64 + 32*i: slot i header: u64 seq, u64 frame_no, u64 tick, u64 reserved
    256 + i*width*height*3: slot i pixels, RGB uint8, row-major, top row first
"""

from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

FRAME_LAYOUT_VERSION = 1
_MAGIC = 0x52464750  # 'PGFR' read little-endian
_HEADER = struct.Struct("<IIIIII")
_SLOT = struct.Struct("<QQQQ")
_SLOT_BASE = 64
_DATA_BASE = 256
_SLOTS = 2
MAX_WIDTH, MAX_HEIGHT = 1920, 1080


class TornFrameError(RuntimeError):
    """The writer kept overwriting the frame while the reader tried to copy it."""


def ring_size(width: int, height: int) -> int:
    return _DATA_BASE + _SLOTS * width * height * 3


def check_resolution(width: int, height: int) -> None:
    if not (16 <= width <= MAX_WIDTH and 16 <= height <= MAX_HEIGHT):
        raise ValueError(
            f"resolution {width}x{height} is not supported; use 16x16 up to {MAX_WIDTH}x{MAX_HEIGHT}"
        )


@dataclass(frozen=True)
class Frame:
    """One frame: pixels (H, W, 3) uint8 RGB, its frame number and the game tick it shows."""

    pixels: np.ndarray
    frame_no: int
    tick: int


class BorrowedFrame:
    """A frame borrowed from the ring, zero-copy: its pixels live in the ring's slot until the writer reuses it.

    Call `intact()` after using `pixels` to learn whether that happened. (The studio's frame display is
    widgets.frame_view.FrameView; this is not a widget.)
    """

    def __init__(self, ring: FrameRing, slot: int, seq: int, frame: Frame) -> None:
        self._ring = ring
        self._slot = slot
        self._seq = seq
        self.frame = frame

    @property
    def pixels(self) -> np.ndarray:
        return self.frame.pixels

    def intact(self) -> bool:
        return self._ring.slot_seq(self._slot) == self._seq


class FrameRing:
    """Both ends of the frame ring. The world creates it; clients attach to it."""

    def __init__(self, path: Path, mapping: mmap.mmap, width: int, height: int, writable: bool) -> None:
        self.path = path
        self.width = width
        self.height = height
        self._map = mapping
        self._writable = writable
        self._buffer = memoryview(mapping)
        self._frame_bytes = width * height * 3
        self._next_frame_no = 1

    # -- creation -------------------------------------------------------------------
    @classmethod
    def create(cls, path: Path, width: int, height: int) -> FrameRing:
        check_resolution(width, height)
        size = ring_size(width, height)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.ftruncate(fd, size)
            mapping = mmap.mmap(fd, size)
        finally:
            os.close(fd)
        _HEADER.pack_into(mapping, 0, _MAGIC, FRAME_LAYOUT_VERSION, width, height, _SLOTS, 0)
        return cls(path, mapping, width, height, writable=True)

    @classmethod
    def attach(cls, path: Path) -> FrameRing:
        fd = os.open(path, os.O_RDONLY)
        try:
            size = os.fstat(fd).st_size
            if size < _DATA_BASE:
                raise ValueError(f"{path} is too small to be a frame ring ({size} bytes)")
            mapping = mmap.mmap(fd, size, access=mmap.ACCESS_READ)
        finally:
            os.close(fd)
        magic, version, width, height, slots, _ = _HEADER.unpack_from(mapping, 0)
        if magic != _MAGIC or version != FRAME_LAYOUT_VERSION or slots != _SLOTS:
            mapping.close()
            raise ValueError(f"{path} is not a version-{FRAME_LAYOUT_VERSION} frame ring")
        if size < ring_size(width, height):
            mapping.close()
            raise ValueError(f"{path} is truncated for {width}x{height} frames")
        return cls(path, mapping, width, height, writable=False)

    # -- writer ---------------------------------------------------------------------
    def write(self, pixels: np.ndarray, tick: int) -> int:
        """Publish a frame (H, W, 3) uint8. Returns its frame number."""
        if not self._writable:
            raise PermissionError("this frame ring was attached read-only")
        if pixels.shape != (self.height, self.width, 3) or pixels.dtype != np.uint8:
            raise ValueError(f"expected ({self.height}, {self.width}, 3) uint8, got {pixels.shape} {pixels.dtype}")
        frame_no = self._next_frame_no
        slot = frame_no % _SLOTS
        header = _SLOT_BASE + slot * _SLOT.size
        seq = self.slot_seq(slot)
        struct.pack_into("<Q", self._map, header, seq + 1)  # odd: writing
        start = _DATA_BASE + slot * self._frame_bytes
        target = np.frombuffer(self._buffer[start:start + self._frame_bytes], dtype=np.uint8)
        np.copyto(target.reshape(pixels.shape), pixels)
        _SLOT.pack_into(self._map, header, seq + 1, frame_no, tick, 0)
        struct.pack_into("<Q", self._map, header, seq + 2)  # even: complete
        self._next_frame_no += 1
        return frame_no

    # -- reader ---------------------------------------------------------------------
    def slot_seq(self, slot: int) -> int:
        return struct.unpack_from("<Q", self._map, _SLOT_BASE + slot * _SLOT.size)[0]

    def latest_view(self) -> BorrowedFrame | None:
        """The newest complete frame without copying, or None if none was written yet."""
        for _ in range(64):
            best: tuple[int, int, int, int] | None = None
            for slot in range(_SLOTS):
                seq, frame_no, tick, _ = _SLOT.unpack_from(self._map, _SLOT_BASE + slot * _SLOT.size)
                if seq % 2 == 0 and frame_no > 0 and (best is None or frame_no > best[1]):
                    best = (slot, frame_no, tick, seq)
            if best is None:
                return None
            slot, frame_no, tick, seq = best
            start = _DATA_BASE + slot * self._frame_bytes
            pixels = np.frombuffer(self._buffer[start:start + self._frame_bytes], dtype=np.uint8)
            view = BorrowedFrame(self, slot, seq, Frame(pixels.reshape(self.height, self.width, 3), frame_no, tick))
            if view.intact():
                return view
        raise TornFrameError("the writer overwrote every frame during the read; is it writing in a tight loop?")

    def latest(self) -> Frame | None:
        """A private copy of the newest complete frame, guaranteed untorn."""
        for _ in range(64):
            view = self.latest_view()
            if view is None:
                return None
            copy = view.pixels.copy()
            if view.intact():
                return Frame(copy, view.frame.frame_no, view.frame.tick)
        raise TornFrameError("could not copy a frame before the writer replaced it (64 tries)")

    def close(self) -> None:
        try:
            self._buffer.release()
            self._map.close()
        except BufferError:
            # A caller still holds a zero-copy view; the mapping is freed when that view dies.
            pass
