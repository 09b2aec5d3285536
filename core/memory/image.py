"""A saved copy of a process's memory that reads like the process (a MemoryReader).

A signature must be unique in every process it was built from, but the game is restarted to
get the next process (one Minetest at a time, one emulator at a time). So each process's
writable memory is copied to a file first, and checked after it is gone: the scanner reads an
image exactly as it reads a live process. Copied region by region through reused buffers, so
copying a 4 GiB process costs disk, not RAM.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from dataclasses import asdict
from pathlib import Path

from core.memory.readers import MemoryReader
from core.memory.regions import Region
from core.memory.scanner import RegionFilter

_COPY_CHUNK = 16 << 20


class MemoryImage:
    """Regions of a process frozen at one moment; implements MemoryReader."""

    def __init__(self, folder: Path, pid: int, regions: list[tuple[Region, int]], maps: list[Region]) -> None:
        self.folder = folder
        self.pid = pid
        self._regions = regions                   # (region, offset of its bytes in the data file)
        self.maps = maps                          # every mapping, copied or not (module bases, pointers)
        self._fd = os.open(folder / "image.bin", os.O_RDONLY)

    @classmethod
    def capture(cls, reader: MemoryReader, folder: Path | None = None,
                region_filter: RegionFilter | None = None) -> MemoryImage:
        folder = Path(tempfile.mkdtemp(prefix="pokegym-image-")) if folder is None else folder
        folder.mkdir(parents=True, exist_ok=True)
        region_filter = region_filter or RegionFilter(perms="rw")
        kept: list[tuple[Region, int]] = []
        buffer = bytearray(_COPY_CHUNK)
        offset = 0
        maps = reader.regions()
        with open(folder / "image.bin", "wb") as out:
            for region in maps:
                if not region.readable or not region_filter.accepts(region):
                    continue
                for start, end in reader.extents(region):
                    piece = Region(start, end, region.perms, region.offset + start - region.start, region.path)
                    address, length = start, 0
                    while address < end:
                        size = min(_COPY_CHUNK, end - address)
                        got = reader.read_into(address, memoryview(buffer)[:size])
                        out.write(memoryview(buffer)[:got])
                        length += got
                        if got < size:
                            break
                        address += size
                    if length:
                        kept.append((Region(start, start + length, piece.perms, piece.offset, piece.path), offset))
                        offset += length
        (folder / "regions.json").write_text(json.dumps(
            {"pid": reader.pid, "regions": [{**asdict(r), "file_offset": o} for r, o in kept],
             "maps": [asdict(r) for r in maps]}))
        return cls(folder, reader.pid, kept, maps)

    @classmethod
    def load(cls, folder: Path) -> MemoryImage:
        data = json.loads((folder / "regions.json").read_text())
        regions = [(Region(r["start"], r["end"], r["perms"], r["offset"], r["path"]), r["file_offset"])
                   for r in data["regions"]]
        maps = [Region(r["start"], r["end"], r["perms"], r["offset"], r["path"]) for r in data["maps"]]
        return cls(folder, data["pid"], regions, maps)

    @property
    def size(self) -> int:
        return sum(region.size for region, _ in self._regions)

    def regions(self) -> list[Region]:
        return [region for region, _ in self._regions]

    def extents(self, region: Region) -> list[tuple[int, int]]:
        return [(region.start, region.end)]

    def read_into(self, address: int, buffer: bytearray | memoryview) -> int:
        view = memoryview(buffer).cast("B")
        for region, file_offset in self._regions:
            if region.start <= address < region.end:
                size = min(len(view), region.end - address)
                return os.preadv(self._fd, [view[:size]], file_offset + address - region.start)
        return 0

    def read(self, address: int, size: int) -> bytes:
        buffer = bytearray(size)
        return bytes(buffer[:self.read_into(address, buffer)])

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def delete(self) -> None:
        self.close()
        for name in ("image.bin", "regions.json"):
            (self.folder / name).unlink(missing_ok=True)
        with contextlib.suppress(OSError):  # something else lives there: leave the folder
            self.folder.rmdir()
