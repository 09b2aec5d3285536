"""A real single-node Ray cluster for tests: `ray start --head --block` on loopback, with its own HOME (Ray
writes its authentication token there) and temporary folder. Stopping that one process (SIGTERM) stops
every Ray process it started; nothing else on the machine is touched."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.cli_process import command_line, gone

READY_LINE = "Ray runtime started"
KEY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class RayHead:
    process: subprocess.Popen
    address: str
    env: dict[str, str]
    temp_dir: Path
    log: Path
    seen: dict[int, str] = field(default_factory=dict)

    def descendants(self) -> dict[int, str]:
        """Every live process under the head (GCS, raylet, workers, and the worlds they start), by pid."""
        parents: dict[int, int] = {}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                except (OSError, IndexError, ValueError):
                    continue
        found, frontier = {}, [self.process.pid]
        while frontier:
            parent = frontier.pop()
            for pid, ppid in parents.items():
                if ppid == parent and pid not in found:
                    cmdline = command_line(pid)
                    if cmdline is not None:
                        found[pid] = cmdline
                        frontier.append(pid)
        self.seen.update(found)
        return found

    def owned_by_head(self, pid: int) -> bool:
        return pid in self.descendants()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)  # `ray start --block` stops what it started
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        for pid, cmdline in self.seen.items():  # anything that outlived it (a world whose owner was killed)
            if not gone(pid) and command_line(pid) == cmdline:
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(self.temp_dir, ignore_errors=True)  # Ray's session logs and sockets


def start_head(home: Path, cpus: int = 2, extra_env: dict[str, str] | None = None, timeout: float = 120) -> RayHead:
    port = free_port()
    temp_dir = Path(tempfile.mkdtemp(prefix="rt", dir="/tmp"))  # short: Ray's unix sockets live here
    # No API key of the developer's leaks in: a node has exactly the variables a test gives it.
    inherited = {k: v for k, v in os.environ.items() if k not in KEY_VARIABLES}
    env = {**inherited, "HOME": str(home), "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", **(extra_env or {})}
    log = temp_dir / "head.log"
    ray = str(Path(sys.executable).parent / "ray")
    with log.open("w") as handle:
        process = subprocess.Popen([ray, "start", "--head", "--block", f"--port={port}", f"--num-cpus={cpus}",
                                    "--include-dashboard=false", f"--temp-dir={temp_dir}", "--disable-usage-stats"],
                                   env=env, stdout=handle, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True)
    head = RayHead(process, f"127.0.0.1:{port}", env, temp_dir, log)
    deadline = time.monotonic() + timeout
    while READY_LINE not in log.read_text(errors="replace"):
        if process.poll() is not None or time.monotonic() > deadline:
            head.stop()
            raise RuntimeError(f"ray start failed:\n{log.read_text(errors='replace')[-3000:]}")
        time.sleep(0.2)
    return head
