"""Finding a game's live state block: scan for the signature (or follow the profile's pointer root),
keep only candidates that validate, and read fields that sit behind pointers."""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from typing import Any

from core.evaluation.profile import BlockInvalid, PointerRoot, Profile
from core.memory.readers import MemoryReader
from core.memory.regions import Region
from core.memory.scanner import RegionFilter, ScanStats, scan

POINTER = struct.Struct("<Q")
MAX_USER_ADDRESS = 0x7FFF_FFFF_FFFF


@dataclass(frozen=True)
class LocatedBlock:
    address: int
    values: dict[str, Any]
    mismatches: int = 0   # signature bytes that differed (within the profile's max_mismatches)


class BlockNotFound(LookupError):
    pass


def module_base(regions: list[Region], module: str) -> int | None:
    """Where `module` (a file name such as "minetest" or "libfoo.so.1", or a full path) is loaded:
    the lowest mapping of that file."""
    starts = [r.start for r in regions if r.path and (r.path == module or os.path.basename(r.path) == module)]
    return min(starts) if starts else None


def follow_chain(reader: MemoryReader, address: int, chain: list[int]) -> int | None:
    """[[address] + chain[0]] + chain[1] ...: the address at the end, or None where a pointer is unreadable
    or not a user-space address."""
    for offset in chain:
        data = reader.read(address, 8)
        if len(data) < 8:
            return None
        (pointer,) = POINTER.unpack(data)
        if not 0x1000 <= pointer <= MAX_USER_ADDRESS:
            return None
        address = pointer + offset
    return address


def resolve_root(reader: MemoryReader, root: PointerRoot, regions: list[Region] | None = None) -> int | None:
    base = module_base(regions if regions is not None else reader.regions(), root.module)
    if base is None:
        return None
    return follow_chain(reader, base + root.offset, root.chain)


def _decode_at(reader: MemoryReader, profile: Profile, address: int) -> dict[str, Any]:
    def follow(offset: int, chain: list[int], size: int) -> bytes:
        end = follow_chain(reader, address + offset, chain)
        return b"" if end is None else reader.read(end, size)

    return profile.decode(reader.read(address, profile.block_size), follow)


def candidates(reader: MemoryReader, profile: Profile, region_filter: RegionFilter | None = None,
               stats: ScanStats | None = None) -> list[LocatedBlock]:
    """Every block that decodes and validates: the pointer root's target, or each signature match
    (regions from the profile by default). A profile that allows mismatches is scanned with that
    tolerance only when no exact match validates, and then only the closest matches are kept."""
    if profile.pointer is not None:
        address = resolve_root(reader, profile.pointer)
        if address is None:
            return []
        try:
            return [LocatedBlock(address, _decode_at(reader, profile, address))]
        except BlockInvalid:
            return []
    pattern = profile.compiled_signature()
    if region_filter is None:
        region_filter = RegionFilter(perms=profile.scan_regions.perms, path_contains=profile.scan_regions.path_contains)
    offset = profile.signature.base_offset if profile.signature else 0
    tolerance = profile.signature.max_mismatches if profile.signature else 0
    for allowed in sorted({0, tolerance}):
        found: list[LocatedBlock] = []
        for match in scan(reader, pattern, region_filter, stats=stats, tolerance=allowed):
            address = match.address + offset
            try:
                values = _decode_at(reader, profile, address)
            except BlockInvalid:
                continue
            found.append(LocatedBlock(address, values, match.mismatches))
        if found:
            fewest = min(block.mismatches for block in found)
            return [block for block in found if block.mismatches == fewest]
    return []


def read_block(reader: MemoryReader, profile: Profile, address: int, attempts: int = 8) -> dict[str, Any]:
    """Decode the block at a known address; retries reads torn by a concurrent update."""
    last: BlockInvalid | None = None
    for _ in range(attempts):
        try:
            return _decode_at(reader, profile, address)
        except BlockInvalid as exc:
            last = exc
    raise BlockInvalid(f"block at {address:#x} no longer validates: {last}")
