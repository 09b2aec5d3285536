"""Our own X server (Xvfb), for CI and headless machines: started on a free display, ended by us."""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import time
from dataclasses import dataclass

from core.game.errors import GameStartError
from core.game.external.processes import end_process_group


@dataclass
class Xvfb:
    process: subprocess.Popen[bytes]
    display: str

    @classmethod
    def start(cls, screen: str = "1024x768x24", timeout: float = 20.0) -> Xvfb:
        binary = shutil.which("Xvfb")
        if binary is None:
            raise GameStartError("Xvfb is not installed, and this backend needs an X server: "
                                 "install it (Debian/Ubuntu: apt-get install xvfb) or run with DISPLAY set")
        read_fd, write_fd = os.pipe()
        try:
            # -displayfd: the server picks a free display number and writes it to the pipe once it accepts clients.
            process = subprocess.Popen(
                [binary, "-displayfd", str(write_fd), "-screen", "0", screen, "-nolisten", "tcp", "-noreset"],
                pass_fds=(write_fd,), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE, start_new_session=True)
        finally:
            os.close(write_fd)
        try:
            number = _read_display_number(read_fd, process, timeout)
        except BaseException:
            end_process_group(process)
            raise
        finally:
            os.close(read_fd)
        return cls(process, f":{number}")

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        end_process_group(self.process)
        if self.process.stderr is not None:
            self.process.stderr.close()


def _read_display_number(fd: int, process: subprocess.Popen[bytes], timeout: float) -> int:
    deadline = time.monotonic() + timeout
    text = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            chunk = os.read(fd, 64)
            text += chunk
            if text.endswith(b"\n") or not chunk:
                break
        if process.poll() is not None:
            break
    if text.strip().isdigit():
        return int(text.strip())
    error = b""
    if process.poll() is not None and process.stderr is not None:
        error = process.stderr.read() or b""
    raise GameStartError(f"Xvfb did not start within {timeout:.0f} s: {error.decode(errors='replace')[-800:]}")
