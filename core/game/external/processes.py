"""Ending exactly the processes we started: a child, its process group, and what is left of it.

Children are started in their own session (so a Ctrl+C in the terminal reaches only us, and we end
them in order). Liveness is checked without reaping (waitid with WNOWAIT): while an exited child is
not reaped its pid, and so its group id, cannot be reused, so signalling the group never reaches a
stranger.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time


def exit_status(process: subprocess.Popen[bytes]) -> int | None:
    """The child's exit status (negative: killed by that signal) if it has exited, without reaping it."""
    if process.returncode is not None:
        return process.returncode
    try:
        info = os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG)
    except ChildProcessError:
        return process.poll()
    if info is None:
        return None
    return -info.si_status if info.si_code in (os.CLD_KILLED, os.CLD_DUMPED) else info.si_status


def end_process_group(process: subprocess.Popen[bytes], grace_s: float = 5.0,
                      first_signal: int = signal.SIGTERM) -> None:
    """`first_signal` to the child's own group, SIGKILL to whatever remains after `grace_s`, then reap."""
    if process.returncode is not None:
        return  # reaped already: its group id may belong to someone else by now
    pgid = process.pid
    if exit_status(process) is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, first_signal)
        deadline = time.monotonic() + grace_s
        while exit_status(process) is None and time.monotonic() < deadline:
            time.sleep(0.02)
    # The leader is dead or stubborn; its zombie still holds the group id, so this reaches only its group.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    process.wait()


def group_members(pgid: int) -> list[int]:
    """Live pids whose process group is `pgid` (Linux /proc)."""
    members: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            members.append(int(entry))
    return members


class CpuWatch:
    """Notices a process that has stopped running: no CPU time used for a while (hung, or SIGSTOPped).

    A window keeps showing its last picture when its game hangs, so grabbing frames cannot tell; a game
    that renders uses CPU time every second (Minetest at 30 fps: about a quarter of a core).
    """

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self._ticks = self._cpu_ticks()
        self._changed = time.monotonic()

    def _cpu_ticks(self) -> int | None:
        try:
            with open(f"/proc/{self.pid}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return int(fields[11]) + int(fields[12])  # utime + stime

    def idle_seconds(self) -> float:
        ticks = self._cpu_ticks()
        now = time.monotonic()
        if ticks is None or ticks != self._ticks:
            self._ticks, self._changed = ticks, now
        return now - self._changed
