"""Finding a game's live state block: scan for the signature, keep only candidates that validate."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.evaluation.profile import BlockInvalid, Profile
from core.memory.readers import MemoryReader
from core.memory.scanner import RegionFilter, ScanStats, scan


@dataclass(frozen=True)
class LocatedBlock:
    address: int
    values: dict[str, Any]


class BlockNotFound(LookupError):
    pass


def candidates(reader: MemoryReader, profile: Profile, region_filter: RegionFilter | None = None,
               stats: ScanStats | None = None) -> list[LocatedBlock]:
    """Every signature match whose block decodes and validates (regions from the profile by default)."""
    pattern = profile.compiled_signature()
    if region_filter is None:
        region_filter = RegionFilter(perms=profile.scan_regions.perms, path_contains=profile.scan_regions.path_contains)
    offset = profile.signature.base_offset if profile.signature else 0
    found = []
    for match in scan(reader, pattern, region_filter, stats=stats):
        address = match.address + offset
        try:
            values = profile.decode(reader.read(address, profile.block_size))
        except BlockInvalid:
            continue
        found.append(LocatedBlock(address, values))
    return found


def read_block(reader: MemoryReader, profile: Profile, address: int, attempts: int = 8) -> dict[str, Any]:
    """Decode the block at a known address; retries reads torn by a concurrent update."""
    last: BlockInvalid | None = None
    for _ in range(attempts):
        try:
            return profile.decode(reader.read(address, profile.block_size))
        except BlockInvalid as exc:
            last = exc
    raise BlockInvalid(f"block at {address:#x} no longer validates: {last}")
