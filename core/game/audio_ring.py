"""Sound in shared memory: the last few seconds of the game's PCM, one slot per tick, keyed by tick.

The world writes the mixed signal of every tick into the slot after the last one, wrapping round, so
the ring always holds the newest `capacity` ticks. Each slot carries a sequence counter (odd while it
is being written), the epoch and the tick. An epoch is a stretch of ticks with no jump in between:
a reset or a restore starts a new one, because the tick counter goes back. A reader asks for ticks of
the current epoch, copies them, and checks the counters again afterwards, so it never returns a slot
the writer touched during the copy (the frame ring's seqlock, docs/frame-ring.md).

Layout (little-endian), version 1 (docs/audio-ring.md):
    0   u32 magic 'PGAR'   4  u32 layout version   8  u32 sample rate   12 u32 channels
    16  u32 samples per tick   20 u32 capacity (slots)   24 u64 current epoch   32..63 reserved
    64 + 32*i: slot i header: u64 seq, u64 epoch, u64 tick, u64 reserved
    data_base + i*samples_per_tick*channels*2: slot i PCM, int16 interleaved (frames x channels)
    data_base = 64 + 32*capacity rounded up to a multiple of 64
"""

from __future__ import annotations

import contextlib
import mmap
import os
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.game.errors import GameError

AUDIO_LAYOUT_VERSION = 1
_MAGIC = 0x52414750  # 'PGAR' read little-endian
_HEADER = struct.Struct("<IIIIIIQ")
_EPOCH_OFFSET = 24
_SLOT_BASE = 64
_SLOT_DTYPE = np.dtype([("seq", "<u8"), ("epoch", "<u8"), ("tick", "<u8"), ("reserved", "<u8")])
_READ_TRIES = 16


class AudioUnavailableError(GameError):
    """The ticks asked for are not in the ring: gone (overwritten, or before a reset) or not played yet."""


@dataclass(frozen=True)
class AudioFormat:
    """What the game's sound is: samples per second, channels, and samples per game tick."""

    rate: int
    channels: int
    samples_per_tick: int


@dataclass(frozen=True)
class AudioHeld:
    """What a ring holds now: the current epoch, and its first and last tick still there."""

    epoch: int
    first: int
    last: int


def _data_base(capacity: int) -> int:
    return -(-(_SLOT_BASE + _SLOT_DTYPE.itemsize * capacity) // 64) * 64


def ring_size(fmt: AudioFormat, capacity: int) -> int:
    return _data_base(capacity) + capacity * fmt.samples_per_tick * fmt.channels * 2


class AudioRing:
    """Both ends of the audio ring. The world creates it; clients attach to it."""

    def __init__(self, path: Path, mapping: mmap.mmap, fmt: AudioFormat, capacity: int, writable: bool) -> None:
        self.path = path
        self.format = fmt
        self.capacity = capacity
        self._map = mapping
        self._writable = writable
        base = _data_base(capacity)
        self._slots = np.ndarray((capacity,), _SLOT_DTYPE, buffer=mapping, offset=_SLOT_BASE)
        self._pcm = np.ndarray((capacity, fmt.samples_per_tick, fmt.channels), np.int16, buffer=mapping,
                               offset=base)
        self._next = 0  # writer: the slot the next tick goes to

    # -- creation -------------------------------------------------------------------
    @classmethod
    def create(cls, path: Path, fmt: AudioFormat, capacity: int) -> AudioRing:
        if capacity < 2 or fmt.samples_per_tick < 1 or fmt.channels < 1:
            raise ValueError(f"an audio ring needs at least 2 slots and 1 sample per tick, got {capacity}, {fmt}")
        size = ring_size(fmt, capacity)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.ftruncate(fd, size)
            mapping = mmap.mmap(fd, size)
        finally:
            os.close(fd)
        _HEADER.pack_into(mapping, 0, _MAGIC, AUDIO_LAYOUT_VERSION, fmt.rate, fmt.channels, fmt.samples_per_tick,
                          capacity, 0)
        return cls(path, mapping, fmt, capacity, writable=True)

    @classmethod
    def attach(cls, path: Path) -> AudioRing:
        fd = os.open(path, os.O_RDONLY)
        try:
            size = os.fstat(fd).st_size
            if size < _SLOT_BASE:
                raise ValueError(f"{path} is too small to be an audio ring ({size} bytes)")
            mapping = mmap.mmap(fd, size, access=mmap.ACCESS_READ)
        finally:
            os.close(fd)
        magic, version, rate, channels, per_tick, capacity, _ = _HEADER.unpack_from(mapping, 0)
        fmt = AudioFormat(rate, channels, per_tick)
        if magic != _MAGIC or version != AUDIO_LAYOUT_VERSION:
            mapping.close()
            raise ValueError(f"{path} is not a version-{AUDIO_LAYOUT_VERSION} audio ring")
        if capacity < 2 or size < ring_size(fmt, capacity):
            mapping.close()
            raise ValueError(f"{path} is truncated for {capacity} ticks of {fmt}")
        return cls(path, mapping, fmt, capacity, writable=False)

    @property
    def seconds(self) -> float:
        return self.capacity * self.format.samples_per_tick / self.format.rate

    # -- writer ---------------------------------------------------------------------
    @property
    def epoch(self) -> int:
        return int(struct.unpack_from("<Q", self._map, _EPOCH_OFFSET)[0])

    def begin_epoch(self) -> int:
        """The tick counter is about to jump (reset, restore): ticks written from now on are a new stretch."""
        self._require_writer()
        epoch = self.epoch + 1
        struct.pack_into("<Q", self._map, _EPOCH_OFFSET, epoch)
        return epoch

    def write(self, first_tick: int, pcm: np.ndarray) -> None:
        """Publish consecutive ticks first_tick, first_tick + 1, ...: pcm is (ticks * samples_per_tick, channels)
        int16, at most `capacity` ticks."""
        self._require_writer()
        per_tick, channels = self.format.samples_per_tick, self.format.channels
        if pcm.dtype != np.int16 or pcm.ndim != 2 or pcm.shape[1] != channels or pcm.shape[0] % per_tick:
            raise ValueError(f"expected (n * {per_tick}, {channels}) int16, got {pcm.shape} {pcm.dtype}")
        ticks = pcm.shape[0] // per_tick
        if ticks > self.capacity:  # only the newest capacity ticks can be kept anyway
            pcm, first_tick, ticks = pcm[-self.capacity * per_tick:], first_tick + ticks - self.capacity, self.capacity
        blocks = pcm.reshape(ticks, per_tick, channels)
        epoch, done = self.epoch, 0
        while done < ticks:  # in at most two runs of slots: up to the end of the ring, then from its start
            first = self._next
            count = min(ticks - done, self.capacity - first)
            slots = self._slots[first:first + count]
            slots["seq"] += 1  # odd: being written
            self._pcm[first:first + count] = blocks[done:done + count]
            slots["epoch"] = epoch
            slots["tick"] = np.arange(first_tick + done, first_tick + done + count, dtype=np.uint64)
            slots["seq"] += 1  # even: complete
            self._next = (first + count) % self.capacity
            done += count

    def _require_writer(self) -> None:
        if not self._writable:
            raise PermissionError("this audio ring was attached read-only")

    # -- reader ---------------------------------------------------------------------
    def read(self, first_tick: int, last_tick: int) -> np.ndarray:
        """A private copy of ticks first_tick..last_tick (inclusive) of the current epoch, as
        ((last - first + 1) * samples_per_tick, channels) int16, never torn."""
        if last_tick < first_tick:
            return np.zeros((0, self.format.channels), np.int16)
        count = last_tick - first_tick + 1
        for _ in range(_READ_TRIES):
            epoch = self.epoch
            table = self._slots.copy()
            slots = np.flatnonzero((table["epoch"] == epoch) & (table["tick"] >= first_tick)
                                   & (table["tick"] <= last_tick) & (table["seq"] > 0))
            if np.any(table["seq"][slots] % 2):
                continue  # the writer is in one of them right now
            if len(slots) != count:
                raise AudioUnavailableError(self._missing(table, epoch, first_tick, last_tick))
            slots = slots[np.argsort(table["tick"][slots])]
            pcm = self._pcm[slots]  # fancy indexing: a copy
            if np.array_equal(self._slots["seq"][slots], table["seq"][slots]) and self.epoch == epoch:
                return pcm.reshape(count * self.format.samples_per_tick, self.format.channels)
        raise AudioUnavailableError(f"ticks {first_tick}..{last_tick} were overwritten while being read "
                                    f"{_READ_TRIES} times; read a step's sound right after the step")

    def ticks_held(self) -> tuple[int, int] | None:
        """The first and last tick of the current epoch still in the ring, or None if it holds none yet."""
        table = self._slots.copy()
        ticks = table["tick"][(table["epoch"] == self.epoch) & (table["seq"] > 0) & (table["seq"] % 2 == 0)]
        return (int(ticks.min()), int(ticks.max())) if len(ticks) else None

    def held(self) -> AudioHeld | None:
        """ticks_held() with the epoch they belong to: a reader that follows the ring (the studio's speaker)
        sees a reset or restore as a new epoch, not as ticks going back. None while the epoch holds no tick."""
        epoch = self.epoch
        span = self.ticks_held()
        return AudioHeld(epoch, *span) if span is not None and self.epoch == epoch else None

    def _missing(self, table: np.ndarray, epoch: int, first_tick: int, last_tick: int) -> str:
        held = table["tick"][(table["epoch"] == epoch) & (table["seq"] > 0)]
        span = f"ticks {first_tick}..{last_tick}"
        keeps = f"the ring keeps the last {self.capacity} ticks ({self.seconds:.0f} s)"
        if not len(held):
            return f"{span} are not in the audio ring: no tick has been played since the last reset or restore"
        low, high = int(held.min()), int(held.max())
        if last_tick > high:
            return f"{span} have not been played yet: the game is at tick {high}"
        return (f"{span} are gone from the audio ring, which holds ticks {low}..{high} since the last reset or "
                f"restore; {keeps}, so read a step's sound right after the step")

    def close(self) -> None:
        del self._slots, self._pcm  # views on the mapping must go before it can close
        with contextlib.suppress(BufferError):  # a caller still holds a view: freed when that view dies
            self._map.close()
