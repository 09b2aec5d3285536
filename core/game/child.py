"""Starting helper processes (the world, the evaluator) that announce readiness with a READY line.

Each child runs in its own session (its own process group), so a terminal's Ctrl+C reaches only the
harness, which then closes its children itself (`python main.py run`: stop cleanly, or abort with
`kill_all`). A child whose owner dies notices and exits on its own (--owner-pid).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from multiprocessing.connection import Connection
from pathlib import Path
from typing import IO

from core.game import ipc
from core.game.errors import GameStartError
from core.paths import PROJECT_ROOT

_PUMPED: set[int] = set()  # children whose stderr a pump thread owns
# Every child started and not yet stopped, with the private folder its owner made for it (for kill_all).
_LIVE: dict[int, tuple[subprocess.Popen[bytes], Path | None]] = {}
_LIVE_LOCK = threading.Lock()


def write_endpoint(runtime_dir: Path) -> ipc.Endpoint:
    """A fresh key and address, handed to the child in a 0600 file (never on its command line)."""
    endpoint = ipc.new_endpoint(runtime_dir)
    fd = os.open(runtime_dir / "endpoint.json", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(endpoint.to_json(), handle)
    return endpoint


def spawn_and_connect(module: str, args: list[str], timeout: float,
                      stderr_tail: deque[str], what: str,
                      prefix: str = "pokegym-") -> tuple[Connection, subprocess.Popen[bytes], Path]:
    """Start `python -m module` with a private runtime directory and connect to it, or clean up."""
    runtime_dir = ipc.private_runtime_dir(prefix)
    process = None
    try:
        endpoint = write_endpoint(runtime_dir)
        process = start_child(module, [*args, "--runtime-dir", str(runtime_dir)], timeout,
                              stderr_tail, what)
        with _LIVE_LOCK:
            _LIVE[process.pid] = (process, runtime_dir)
        try:
            conn = ipc.connect(endpoint)
        except ipc.ConnectionBusyError as exc:  # an episode's failure to start, never the run's (64 at once did it)
            raise GameStartError(f"the {what} process started but did not take the connection: {exc}. The machine "
                                 "may be overloaded: run fewer games at once (for `run`, fewer --workers)") from None
    except BaseException:
        if process is not None:
            stop(process)
        shutil.rmtree(runtime_dir, ignore_errors=True)
        raise
    (runtime_dir / "endpoint.json").unlink(missing_ok=True)  # the key is no longer needed on disk
    _keep_draining(process, stderr_tail)
    return conn, process, runtime_dir


def _keep_draining(process: subprocess.Popen[bytes], stderr_tail: deque[str]) -> None:
    """Read the child's stderr for as long as it runs, keeping the tail for error messages.

    Nobody else reads that pipe after start-up; a child that logs a lot would otherwise block
    once the pipe's buffer is full.
    """
    stream = process.stderr
    if stream is None:
        return

    def pump() -> None:
        # This thread owns the pipe from now on and closes it at end of file (when the child exits),
        # so no other code can close the descriptor under it and let the number be reused.
        with stream:
            while chunk := os.read(stream.fileno(), 65536):
                stderr_tail.append(chunk.decode(errors="replace"))

    _PUMPED.add(process.pid)
    threading.Thread(target=pump, name=f"stderr-{process.pid}", daemon=True).start()


def start_child(module: str, args: list[str], timeout: float, stderr_tail: deque[str],
                what: str) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", module, *args, "--owner-pid", str(os.getpid())]
    # A session (POSIX) or process group (Windows) of its own: the terminal's Ctrl+C is ours to handle.
    process = subprocess.Popen(command, cwd=PROJECT_ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, start_new_session=os.name != "nt",
                               creationflags=getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0))
    with _LIVE_LOCK:
        _LIVE[process.pid] = (process, None)
    try:
        _wait_ready(process, timeout, stderr_tail, what)
    except BaseException:
        stop(process)
        raise
    return process


def _wait_ready(process: subprocess.Popen[bytes], timeout: float, stderr_tail: deque[str], what: str) -> None:
    assert process.stdout is not None and process.stderr is not None
    deadline = time.monotonic() + timeout
    buffer = b""
    open_streams = [process.stdout, process.stderr]
    while time.monotonic() < deadline:
        readable, _, _ = select.select(open_streams, [], [], 0.2) if open_streams else ([], [], [])
        for stream in readable:
            chunk = os.read(stream.fileno(), 65536)
            if not chunk:  # end of file: stop watching it, or EOFs would crowd out the last real output
                open_streams.remove(stream)
                continue
            if stream is process.stderr:
                stderr_tail.append(chunk.decode(errors="replace"))
                continue
            buffer += chunk
            if any(line.startswith(b"READY ") for line in buffer.split(b"\n")):
                return
        if not open_streams:
            with contextlib.suppress(subprocess.TimeoutExpired):  # both pipes closed: it is exiting
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
        if process.poll() is not None:
            stderr_tail.append(drain(process.stderr))
            tail = "".join(stderr_tail).strip()[-3000:]
            raise GameStartError(f"the {what} process exited during start-up with "
                                 f"{describe_exit(process.returncode)}.\n{tail}")
    raise GameStartError(f"the {what} process did not become ready within {timeout:.0f} s")


def drain(stream: IO[bytes]) -> str:
    chunks: list[str] = []
    while True:
        readable, _, _ = select.select([stream], [], [], 0)
        if not readable:
            break
        chunk = os.read(stream.fileno(), 65536)
        if not chunk:
            break
        chunks.append(chunk.decode(errors="replace"))
    return "".join(chunks)


def describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


def pid_alive(pid: int) -> bool:
    """True while `pid` runs. A zombie (exited, not yet reaped by its parent) counts as gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by someone else
    try:
        with open(f"/proc/{pid}/stat") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return os.name == "nt"  # no /proc: trust the signal check above
    except PermissionError:
        return True
    return state not in ("Z", "X")


def kill_all() -> None:
    """Abort: kill every child this process started and has not stopped, and remove their private folders.

    For a second Ctrl+C, when there is no time to close them one by one; nothing is waited for.
    """
    with _LIVE_LOCK:
        live = list(_LIVE.values())
        _LIVE.clear()
    for process, runtime_dir in live:
        with contextlib.suppress(OSError):
            if os.name == "nt":
                process.kill()
            else:
                os.killpg(process.pid, signal.SIGKILL)  # its own group: it and anything it started
        if runtime_dir is not None:
            shutil.rmtree(runtime_dir, ignore_errors=True)


def stop(process: subprocess.Popen[bytes]) -> None:
    with _LIVE_LOCK:
        _LIVE.pop(process.pid, None)
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=5.0)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    streams = [process.stdout] if process.pid in _PUMPED else [process.stdout, process.stderr]
    for stream in streams:
        if stream is not None:
            stream.close()
