"""Read-only access to another process's memory, behind one small interface.

Linux: process_vm_readv through ctypes (about 5 GiB/s), falling back to /proc/PID/mem.
Nothing here can write: process_vm_writev is never bound and /proc/PID/mem is opened
read-only.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import sys
from collections.abc import Callable
from typing import Protocol, cast

from core.memory.regions import MemoryAccessError, Region, permission_advice, read_maps
from core.memory.shm import ShmFile, is_shared_file_mapping, open_backing_file


class MemoryReader(Protocol):
    pid: int

    def regions(self) -> list[Region]: ...

    def extents(self, region: Region) -> list[tuple[int, int]]:
        """Address ranges of `region` worth reading (all of it, unless holes can be skipped)."""
        ...

    def read_into(self, address: int, buffer: bytearray | memoryview) -> int:
        """Fill `buffer` from `address`; returns how many bytes were read (0 if unmapped)."""
        ...

    def read(self, address: int, size: int) -> bytes: ...

    def close(self) -> None: ...


class _IoVec(ctypes.Structure):
    _fields_ = [("iov_base", ctypes.c_void_p), ("iov_len", ctypes.c_size_t)]


def _load_process_vm_readv() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    function = getattr(libc, "process_vm_readv", None)
    if function is None:
        return None
    function.argtypes = [ctypes.c_int, ctypes.POINTER(_IoVec), ctypes.c_ulong, ctypes.POINTER(_IoVec),
                         ctypes.c_ulong, ctypes.c_ulong]
    function.restype = ctypes.c_ssize_t
    return function


_PROCESS_VM_READV = _load_process_vm_readv()


class LinuxReader:
    """process_vm_readv when the kernel allows it, else /proc/PID/mem."""

    def __init__(self, pid: int, prefer_proc_mem: bool = False, shm_through_files: bool = True) -> None:
        self.pid = pid
        self._mem: int | None = None
        self._use_vm_readv = _PROCESS_VM_READV is not None and not prefer_proc_mem
        self._shm_through_files = shm_through_files
        self._shm: dict[tuple[int, int], tuple[Region, ShmFile | None]] = {}
        if not os.path.exists(f"/proc/{pid}"):
            raise ProcessLookupError(f"no process with pid {pid}")

    @property
    def method(self) -> str:
        return "process_vm_readv" if self._use_vm_readv else "/proc/PID/mem"

    def regions(self) -> list[Region]:
        regions = read_maps(self.pid)
        if self._shm_through_files:
            for region in regions:
                if is_shared_file_mapping(region) and (region.start, region.end) not in self._shm:
                    self._shm[(region.start, region.end)] = (region, open_backing_file(self.pid, region))
        return regions

    def _backing(self, address: int) -> tuple[Region, ShmFile] | None:
        for (start, end), (region, backing) in self._shm.items():
            if start <= address < end and backing is not None:
                return region, backing
        return None

    def extents(self, region: Region) -> list[tuple[int, int]]:
        found = self._shm.get((region.start, region.end))
        if found is None or found[1] is None:
            return [(region.start, region.end)]
        backing = found[1]
        file_end = min(region.offset + region.size, backing.size)
        shift = region.start - region.offset
        return [(a + shift, b + shift) for a, b in backing.data_extents(region.offset, file_end)]

    def read_into(self, address: int, buffer: bytearray | memoryview) -> int:
        view = memoryview(buffer).cast("B")
        backed = self._backing(address) if self._shm else None
        if backed is not None:
            region, backing = backed
            size = min(len(view), region.end - address)
            return os.preadv(backing.fd, [view[:size]], region.offset + address - region.start)
        if self._use_vm_readv:
            got = self._vm_readv(address, view)
            if got is not None:
                return got
        return self._proc_mem(address, view)

    def read(self, address: int, size: int) -> bytes:
        buffer = bytearray(size)
        got = self.read_into(address, buffer)
        return bytes(buffer[:got])

    def _vm_readv(self, address: int, view: memoryview) -> int | None:
        size = len(view)
        target = (ctypes.c_char * size).from_buffer(view) if not view.readonly else None
        if target is None:
            raise ValueError("read_into needs a writable buffer")
        local = _IoVec(ctypes.addressof(target), size)
        remote = _IoVec(address, size)
        process_vm_readv = cast("Callable[..., int]", _PROCESS_VM_READV)  # present: _use_vm_readv says so
        got = process_vm_readv(self.pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
        del target
        if got >= 0:
            return int(got)
        err = ctypes.get_errno()
        if err == errno.EFAULT:
            return 0
        if err == errno.ESRCH:
            raise ProcessLookupError(f"process {self.pid} has exited")
        if err == errno.EPERM:
            raise MemoryAccessError(permission_advice(self.pid))
        self._use_vm_readv = False  # ENOSYS (old kernel, seccomp): use /proc/PID/mem from now on
        return None

    def _proc_mem(self, address: int, view: memoryview) -> int:
        if self._mem is None:
            try:
                self._mem = os.open(f"/proc/{self.pid}/mem", os.O_RDONLY)
            except FileNotFoundError:
                raise ProcessLookupError(f"process {self.pid} has exited") from None
            except PermissionError:
                raise MemoryAccessError(permission_advice(self.pid)) from None
        try:
            return os.preadv(self._mem, [view], address)
        except OSError as exc:
            if exc.errno in (errno.EIO, errno.EFAULT):
                return 0
            if exc.errno == errno.EPERM:
                raise MemoryAccessError(permission_advice(self.pid)) from None
            raise

    def close(self) -> None:
        if self._mem is not None:
            os.close(self._mem)
            self._mem = None
        for _, backing in self._shm.values():
            if backing is not None:
                backing.close()
        self._shm.clear()


def open_reader(pid: int) -> MemoryReader:
    if sys.platform.startswith("linux"):
        return LinuxReader(pid)
    if sys.platform == "win32":
        from core.memory.windows import WindowsReader

        return WindowsReader(pid)
    raise NotImplementedError(f"reading process memory is not supported on {sys.platform}")
