"""Keeps hold of a game's state block: finds it, reads it, and finds it again when it moves."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from core.evaluation.locate import LocatedBlock, candidates, read_block, resolve_root
from core.evaluation.profile import BlockInvalid, Profile
from core.evaluation.sample import StateSample
from core.memory.readers import MemoryReader
from core.memory.regions import Region
from core.memory.scanner import ScanStats


@dataclass
class TrackerStatus:
    state: str = "scanning"      # scanning, locked, lost, ambiguous (several blocks, nothing to choose by)
    address: int | None = None
    candidates: int = 0
    scans: int = 0
    last_scan_s: float = 0.0
    message: str = ""


class BlockTracker:
    def __init__(self, reader: MemoryReader, profile: Profile) -> None:
        self.reader = reader
        self.profile = profile
        self.status = TrackerStatus()
        self._last_tick: int | None = None
        self._regions: list[Region] | None = None

    def scan(self) -> bool:
        """Look for the block; True once exactly one live candidate remains."""
        stats = ScanStats()
        found = candidates(self.reader, self.profile, stats=stats)
        self.status.scans += 1
        self.status.last_scan_s = stats.seconds
        self.status.candidates = len(found)
        if len(found) > 1 and "tick" in self.profile.fields:
            # Stale copies stop changing; the live block's tick moves on (or is the newest).
            found.sort(key=lambda block: block.values["tick"], reverse=True)
        elif len(found) > 1 and len({_position(block.values) for block in found}) > 1:
            # Nothing tells the game's own block from another object's: locking onto the first would judge a
            # task on whichever came first in memory. Copies that agree are harmless and lock below.
            self.status.state, self.status.address = "ambiguous", None
            self.status.message = (f"{len(found)} places match the signature and hold different positions "
                                   f"({', '.join(_describe(block) for block in found[:4])}): it is not unique in "
                                   "this process, and nothing tells which is the game's own; rebuild the profile "
                                   "from more processes (python main.py memory signature --processes 3) and check "
                                   "it with python main.py memory verify --restarts 3")
            return False
        if found:
            self.status.state, self.status.address = "locked", found[0].address
            self.status.message = f"locked at {found[0].address:#x} ({len(found)} valid candidate(s))"
            if found[0].mismatches:
                self.status.message += (f"; {found[0].mismatches} literal byte(s) of the signature differ here "
                                        "(within its max_mismatches)")
            return True
        self.status.state, self.status.address = "scanning", None
        self.status.message = f"signature not found yet (scan {self.status.scans}, {stats.bytes_read >> 20} MiB)"
        return False

    def sample(self) -> StateSample | None:
        """The current state, or None after losing the block (the next call rescans)."""
        if self.profile.pointer is not None:
            # A pointer root is followed on every sample: games move objects, and the old copy
            # may still look valid for a while.
            return self._sample_through_pointers()
        if self.status.address is None and not self.scan():
            return None
        assert self.status.address is not None
        # Stamped with when the read began: a read preempted before its stamp must not pass for one made
        # after a caller's moment (sample_after), or a step would see the position from before its move.
        read_at = time.time()
        try:
            values = read_block(self.reader, self.profile, self.status.address)
        except BlockInvalid as exc:
            self.status.state, self.status.address = "lost", None
            self.status.message = f"block stopped validating ({exc}); rescanning"
            return None
        return StateSample.from_values(values, read_at)

    def _sample_through_pointers(self) -> StateSample | None:
        assert self.profile.pointer is not None
        if self._regions is None:
            self._regions = self.reader.regions()
        read_at = time.time()  # as in sample(): when the read began
        address = resolve_root(self.reader, self.profile.pointer, self._regions)
        values = None
        reason = ""
        if address is not None:
            try:
                values = read_block(self.reader, self.profile, address, attempts=2)
            except BlockInvalid as exc:
                reason = str(exc)
        else:
            reason = f"the pointer chain from {self.profile.pointer.module} does not resolve"
            self._regions = None  # the module may have been loaded since: list the mappings again
        if values is None:
            self.status.state, self.status.address = "scanning", None
            self.status.message = f"{reason}; retrying"
            return None
        self.status.state, self.status.address = "locked", address
        self.status.message = f"locked at {address:#x} through pointers from {self.profile.pointer.module}"
        return StateSample.from_values(values, read_at)


def _position(values: dict[str, Any]) -> tuple[object, ...]:
    return tuple(values.get(axis) for axis in ("x", "y", "z"))


def _describe(block: LocatedBlock) -> str:
    return f"{block.address:#x}: " + ", ".join(f"{value:g}" if isinstance(value, float) else str(value)
                                             for value in _position(block.values))
