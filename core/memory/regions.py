"""Memory regions of a live process, from /proc/PID/maps on Linux."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


class MemoryAccessError(PermissionError):
    """Reading the target process is not allowed; the message says how to allow it."""


@dataclass(frozen=True)
class Region:
    start: int
    end: int
    perms: str
    offset: int
    path: str

    @property
    def size(self) -> int:
        return self.end - self.start

    @property
    def readable(self) -> bool:
        return self.perms.startswith("r")

    def __str__(self) -> str:
        return f"{self.start:#x}-{self.end:#x} {self.perms} {self.path or '[anonymous]'}"


def parse_maps(text: str) -> list[Region]:
    regions: list[Region] = []
    for line in text.splitlines():
        parts = line.split(maxsplit=5)
        if len(parts) < 5:
            continue
        start, end = (int(v, 16) for v in parts[0].split("-"))
        path = parts[5].strip() if len(parts) == 6 else ""
        regions.append(Region(start, end, parts[1], int(parts[2], 16), path))
    return regions


def read_maps(pid: int) -> list[Region]:
    try:
        return parse_maps(Path(f"/proc/{pid}/maps").read_text())
    except FileNotFoundError:
        raise ProcessLookupError(f"no process with pid {pid}") from None
    except PermissionError:
        raise MemoryAccessError(permission_advice(pid, "list the memory regions of")) from None


def ptrace_scope() -> int | None:
    try:
        return int(Path("/proc/sys/kernel/yama/ptrace_scope").read_text().strip())
    except (OSError, ValueError):
        return None


def permission_advice(pid: int, action: str = "read the memory of") -> str:
    scope = ptrace_scope()
    lines = [f"not allowed to {action} process {pid}. Reading another process needs ptrace-attach rights:"]
    lines.append("  - run the game as the same user as PokeGym Studio;")
    if scope is not None and scope >= 1:
        lines.append(f"  - Yama ptrace_scope is {scope}: only a parent may read its child. Launch the game from "
                     "PokeGym Studio, or relax the policy with `sudo sysctl kernel.yama.ptrace_scope=0`;")
    lines.append("  - or grant the capability: `sudo setcap cap_sys_ptrace=eip $(readlink -f $(which python3))`.")
    return "\n".join(lines)
