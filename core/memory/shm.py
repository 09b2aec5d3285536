"""Reading shared-memory mappings through the file instead of through the address space.

Ryujinx keeps guest RAM in one unlinked /dev/shm file mapped several times. Reading untouched
pages of such a mapping with process_vm_readv or /proc/PID/mem makes the kernel allocate them
(FACTS.md: a 256 MiB read added 256 MiB of shared memory). Reading the file through
/proc/PID/fd/N with SEEK_DATA / SEEK_HOLE visits only pages that hold data and allocates nothing.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path

from core.memory.regions import MemoryAccessError, Region, permission_advice

SHM_PREFIXES = ("/dev/shm/", "/memfd:")


def is_shared_file_mapping(region: Region) -> bool:
    return region.path.startswith(SHM_PREFIXES)


@dataclass
class ShmFile:
    """An open descriptor on the file behind a shared mapping."""

    fd: int
    size: int

    def data_extents(self, start: int, end: int) -> list[tuple[int, int]]:
        """File ranges within [start, end) that hold data (holes skipped)."""
        extents: list[tuple[int, int]] = []
        position = start
        while position < end:
            try:
                data = os.lseek(self.fd, position, os.SEEK_DATA)
            except OSError as exc:
                if exc.errno == errno.ENXIO:  # no more data after position
                    break
                raise
            if data >= end:
                break
            hole = os.lseek(self.fd, data, os.SEEK_HOLE)
            extents.append((data, min(hole, end)))
            position = hole
        return extents

    def close(self) -> None:
        os.close(self.fd)


def open_backing_file(pid: int, region: Region) -> ShmFile | None:
    """The file behind `region`, opened read-only through the target's own descriptors."""
    fd_dir = Path(f"/proc/{pid}/fd")
    try:
        entries = list(fd_dir.iterdir())
    except PermissionError:
        raise MemoryAccessError(permission_advice(pid, "open the shared-memory files of")) from None
    for entry in entries:
        try:
            if os.readlink(entry) != region.path:
                continue
            fd = os.open(entry, os.O_RDONLY)
        except (FileNotFoundError, PermissionError):
            continue
        return ShmFile(fd, os.fstat(fd).st_size)
    map_file = Path(f"/proc/{pid}/map_files/{region.start:x}-{region.end:x}")
    try:
        fd = os.open(map_file, os.O_RDONLY)  # needs CAP_SYS_ADMIN on most kernels
    except OSError:
        return None
    return ShmFile(fd, os.fstat(fd).st_size)
