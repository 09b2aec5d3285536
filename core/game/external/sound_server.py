"""A private PulseAudio server for one external game: a null sink the game plays into, and nothing else.

The game is launched with PULSE_SERVER pointing at this server's socket, so its sound never reaches the
user's speakers or their own sound server, and what we capture (the sink's monitor) is the game alone.
The server runs as our child in its own session, with a private 0700 XDG_RUNTIME_DIR (its pid file and
cookie live there, apart from any server the user runs), and ends with the game. Measured recipe:
../shared/FACTS.md ("A private PulseAudio works as root, headless").
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

from core.game.errors import GameStartError
from core.game.external.processes import end_process_group

SINK = "game"
START_TIMEOUT_S = 10.0


class SoundServerError(GameStartError):
    """The private sound server could not start; the game then runs without sound."""


def _socket_answers(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(path))
        except OSError:
            return False
    return True


class PrivateSoundServer:
    """`pulseaudio` with one null sink, reachable only through a socket in the game's runtime folder."""

    def __init__(self, process: subprocess.Popen[bytes], folder: Path, log_path: Path) -> None:
        self.process = process
        self.folder = folder
        self.log_path = log_path

    @property
    def socket_path(self) -> Path:
        return self.folder / "pulse.sock"

    @property
    def address(self) -> str:
        """The value of PULSE_SERVER that reaches this server (for the game and for the capture)."""
        return f"unix:{self.socket_path}"

    @property
    def client_env(self) -> dict[str, str]:
        """What the game's environment needs to play here, and to play without shared memory: a pulse client
        otherwise maps 64 MiB pools into the game, which memory scans (the evaluator, the finder) would read."""
        return {"PULSE_SERVER": self.address, "PULSE_CLIENTCONFIG": str(self.folder / "client.conf")}

    @property
    def monitor(self) -> str:
        """The source that hears everything played into the sink."""
        return f"{SINK}.monitor"

    @classmethod
    def start(cls, runtime_dir: Path, rate: int, channels: int, timeout: float = START_TIMEOUT_S) -> PrivateSoundServer:
        binary = shutil.which("pulseaudio")
        if binary is None:
            raise SoundServerError(
                "the private sound server needs PulseAudio's daemon, which is not installed (Debian/Ubuntu: "
                "apt-get install pulseaudio pulseaudio-utils); or set the backend's external.audio.source to "
                "`system` to capture your own sound server, or `none`")
        folder = runtime_dir / "sound"
        folder.mkdir(mode=0o700)
        config = folder / "server.pa"
        config.write_text(
            f"load-module module-native-protocol-unix auth-anonymous=1 socket={folder / 'pulse.sock'}\n"
            f"load-module module-null-sink sink_name={SINK} rate={rate} channels={channels}\n"
            f"set-default-sink {SINK}\n", encoding="utf-8")
        (folder / "client.conf").write_text("enable-shm = no\nenable-memfd = no\nshm-size-bytes = 2097152\n"
                                            "autospawn = no\n", encoding="utf-8")
        log_path = folder / "pulseaudio.log"
        env = {**os.environ, "XDG_RUNTIME_DIR": str(folder), "HOME": str(folder), "PULSE_SERVER": ""}
        env.pop("DBUS_SESSION_BUS_ADDRESS", None)  # never register with the user's session bus
        with open(log_path, "wb") as log:
            try:
                # -n: no default configuration (which would load the user's modules and devices); our file only.
                process = subprocess.Popen(
                    [binary, "-n", "-F", str(config), "--daemonize=no", "--exit-idle-time=-1", "--disallow-exit",
                     "--disable-shm=yes",  # the game's memory holds no pools of ours (see client_env)
                     "--disallow-module-loading", "--use-pid-file=no", "--log-target=stderr"],
                    env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            except OSError as exc:
                raise SoundServerError(f"could not start the private sound server {binary}: {exc}") from None
        server = cls(process, folder, log_path)
        deadline = time.monotonic() + timeout
        while not _socket_answers(server.socket_path):
            if process.poll() is not None or time.monotonic() > deadline:
                tail = server.log_tail()
                server.stop()
                why = f"exited with status {process.returncode}" if process.returncode is not None \
                    else f"did not answer within {timeout:.0f} s"
                raise SoundServerError(f"the private sound server {why}; its log ends:\n{tail}")
            time.sleep(0.02)
        return server

    def log_tail(self, limit: int = 800) -> str:
        try:
            return self.log_path.read_text(errors="replace").strip()[-limit:] or "(empty)"
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        end_process_group(self.process, 2.0)
