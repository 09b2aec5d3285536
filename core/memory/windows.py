"""Windows: read-only process memory through pymem, behind a narrow API that tests can replace.

The process is opened with PROCESS_VM_READ | PROCESS_QUERY_INFORMATION only, without debug
privilege, so the handle cannot write. pymem is imported lazily: it imports on Linux but
every call fails there (FACTS.md), so everything above `PymemApi` is tested with a fake.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from core.memory.regions import MemoryAccessError, Region

PROCESS_VM_READ = 0x0010
PROCESS_QUERY_INFORMATION = 0x0400
MEM_COMMIT = 0x1000
PAGE_GUARD = 0x100
_PERMS = {0x02: "r--p", 0x04: "rw-p", 0x08: "rw-p", 0x20: "r-xp", 0x40: "rwxp", 0x80: "rwxp", 0x10: "--xp"}
_TYPES = {0x20000: "[private]", 0x40000: "[mapped]", 0x1000000: "[image]"}
MAX_ADDRESS = 0x7FFF_FFFF_FFFF


@dataclass(frozen=True)
class PageInfo:
    base: int
    size: int
    state: int
    protect: int
    type: int


class Win32Api(Protocol):
    def open_process(self, pid: int, access: int) -> Any: ...

    def query(self, handle: Any, address: int) -> PageInfo | None: ...

    def read(self, handle: Any, address: int, size: int) -> bytes: ...

    def close(self, handle: Any) -> None: ...


class PymemApi:
    """The real thing: pymem on Windows."""

    def __init__(self) -> None:
        try:
            import pymem
            import pymem.memory
            import pymem.process
        except ImportError as exc:
            raise RuntimeError("reading game memory on Windows needs pymem: pip install -e '.[emulator]'") from exc
        self._pymem = pymem

    def open_process(self, pid: int, access: int) -> Any:
        return self._pymem.process.open(pid, debug=False, process_access=access)

    def query(self, handle: Any, address: int) -> PageInfo | None:
        try:
            info = self._pymem.memory.virtual_query(handle, address)
        except Exception:  # noqa: BLE001 - pymem raises bare WinAPI errors past the last region
            return None
        if not info.RegionSize:
            return None
        return PageInfo(int(info.BaseAddress or 0), int(info.RegionSize), int(info.State), int(info.Protect),
                        int(info.Type))

    def read(self, handle: Any, address: int, size: int) -> bytes:
        return self._pymem.memory.read_bytes(handle, address, size)

    def close(self, handle: Any) -> None:
        self._pymem.process.close_handle(handle)


class WindowsReader:
    def __init__(self, pid: int, api: Win32Api | None = None) -> None:
        self.pid = pid
        self._api = api if api is not None else PymemApi()
        try:
            self._handle = self._api.open_process(pid, PROCESS_VM_READ | PROCESS_QUERY_INFORMATION)
        except Exception as exc:  # noqa: BLE001 - pymem wraps OpenProcess failures in several types
            raise MemoryAccessError(
                f"cannot open process {pid} for reading ({exc}). Run PokeGym Studio as the same user as the "
                "emulator, or as administrator if the emulator runs elevated."
            ) from None

    def regions(self) -> list[Region]:
        regions: list[Region] = []
        address = 0
        while address < MAX_ADDRESS:
            info = self._api.query(self._handle, address)
            if info is None:
                break
            perms = _PERMS.get(info.protect & 0xFF)
            if info.state == MEM_COMMIT and perms is not None and not info.protect & PAGE_GUARD:
                regions.append(Region(info.base, info.base + info.size, perms, 0, _TYPES.get(info.type, "")))
            address = info.base + info.size
        return regions

    def extents(self, region: Region) -> list[tuple[int, int]]:
        return [(region.start, region.end)]

    def read_into(self, address: int, buffer: bytearray | memoryview) -> int:
        view = memoryview(buffer).cast("B")
        try:
            data = self._api.read(self._handle, address, len(view))
        except Exception:  # noqa: BLE001 - an unreadable page reads as nothing, like EFAULT on Linux
            return 0
        view[:len(data)] = data
        return len(data)

    def read(self, address: int, size: int) -> bytes:
        buffer = bytearray(size)
        return bytes(buffer[:self.read_into(address, buffer)])

    def close(self) -> None:
        self._api.close(self._handle)
