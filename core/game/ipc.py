"""The authenticated local channel between the harness and a game process.

Transport: multiprocessing.connection over a Unix socket inside a private (0700)
directory, or a named pipe on Windows. Both ends prove knowledge of a random 32-byte
key with an HMAC challenge before anything else is exchanged. Messages are JSON
headers plus optional raw byte payloads, sent with send_bytes/recv_bytes, so nothing
is ever unpickled.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import sys
import tempfile
import threading
from dataclasses import dataclass
from multiprocessing import AuthenticationError
from multiprocessing.connection import Client, Connection, Listener, answer_challenge, deliver_challenge, wait
from pathlib import Path
from typing import Any, cast

IPC_PROTOCOL_VERSION = 1
MAX_HEADER_BYTES = 1 << 20


class ConnectionBusyError(TimeoutError):
    """The game accepted the connection but never authenticated it (busy with another client)."""


class ProtocolError(RuntimeError):
    """The peer sent something that is not a valid message."""


@dataclass(frozen=True)
class Endpoint:
    """Where a game listens, and the key that proves a client may talk to it."""

    address: str
    family: str
    authkey: bytes

    def to_json(self) -> dict[str, str]:
        return {"address": self.address, "family": self.family, "authkey": self.authkey.hex()}

    @classmethod
    def from_json(cls, data: dict[str, str]) -> Endpoint:
        return cls(address=data["address"], family=data["family"], authkey=bytes.fromhex(data["authkey"]))


def private_runtime_dir(prefix: str = "pokegym-") -> Path:
    """A fresh directory only this user can enter, in RAM where the OS offers it."""
    base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=base))
    os.chmod(path, 0o700)
    return path


def new_endpoint(runtime_dir: Path) -> Endpoint:
    key = secrets.token_bytes(32)
    if sys.platform == "win32":
        return Endpoint(rf"\\.\pipe\pokegym-{secrets.token_hex(12)}", "AF_PIPE", key)
    return Endpoint(str(runtime_dir / "game.sock"), "AF_UNIX", key)


def listen(endpoint: Endpoint) -> ClientListener:
    return ClientListener(endpoint)


class ClientListener:
    """Where a game waits for clients: each one proves the key before accept() returns it.

    accept() can wait a bounded time. A blocking accept() may never see Ctrl+C: a stop signal that arrives
    between the interpreter's last check and the accept system call (or that the kernel gives to another
    thread) only marks the Python handler pending, and it runs once accept() returns; a world under load sat
    in accept() for a minute after Ctrl+C. A loop that waits at most `timeout` runs the handler within it.
    multiprocessing's Listener has no timeout, so on Unix the socket is ours; a Windows named pipe keeps
    Listener's blocking accept (Ctrl+C there does not depend on interrupting it)."""

    def __init__(self, endpoint: Endpoint) -> None:
        self._endpoint = endpoint
        self._socket: socket.socket | None = None
        self._pipe: Listener | None = None
        if endpoint.family == "AF_UNIX":
            listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                listening.bind(endpoint.address)
                listening.listen(1)
            except OSError:
                listening.close()
                raise
            self._socket = listening
        else:
            self._pipe = Listener(address=endpoint.address, family=endpoint.family, authkey=endpoint.authkey)

    def accept_within(self, timeout: float) -> Connection | None:
        """An authenticated client, or None when none came within `timeout` seconds.

        Raises AuthenticationError for a client without the key, OSError once the listener is closed."""
        if self._pipe is not None:
            return self._pipe.accept()
        if self._socket is None:
            raise OSError("the listener is closed")
        return self.accept() if wait([self._socket], timeout) else None

    def accept(self) -> Connection:
        """The next authenticated client, however long it takes (see the class's note on Ctrl+C)."""
        if self._pipe is not None:
            return self._pipe.accept()
        if self._socket is None:
            raise OSError("the listener is closed")
        accepted, _ = self._socket.accept()
        accepted.setblocking(True)
        conn = Connection(accepted.detach())
        try:
            # The same handshake as Listener.accept and Client: each side proves the key to the other.
            deliver_challenge(conn, self._endpoint.authkey)
            answer_challenge(conn, self._endpoint.authkey)
        except BaseException:
            conn.close()
            raise
        return conn

    def close(self) -> None:
        """Stop listening, and remove the socket file so nobody else can even knock."""
        if self._pipe is not None:
            self._pipe.close()
        if self._socket is not None:
            self._socket.close()
            self._socket = None
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._endpoint.address)


def connect(endpoint: Endpoint, timeout: float = 10.0) -> Connection:
    """Connect and authenticate, or fail within `timeout` seconds.

    multiprocessing's Client has no timeout, and a world busy with another client leaves a new
    one waiting in the listen backlog; the handshake therefore runs in a helper thread.
    """
    outcome: dict[str, Any] = {}

    def attempt() -> None:
        try:
            outcome["conn"] = Client(address=endpoint.address, family=endpoint.family, authkey=endpoint.authkey)
        except BaseException as exc:  # noqa: BLE001 - handed to the calling thread and raised there
            outcome["error"] = exc

    worker = threading.Thread(target=attempt, name="ipc-connect", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise ConnectionBusyError(f"no answer from {endpoint.address} within {timeout:.0f} s: "
                                  "the game is serving another client, or is stuck")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["conn"]


def send_message(conn: Connection, header: dict[str, Any], payloads: list[bytes] | None = None) -> None:
    payloads = payloads or []
    body = dict(header)
    body["payloads"] = [len(p) for p in payloads]
    conn.send_bytes(json.dumps(body, separators=(",", ":")).encode())
    for payload in payloads:
        conn.send_bytes(payload)


def receive_message(conn: Connection) -> tuple[dict[str, Any], list[bytes]]:
    raw = conn.recv_bytes(MAX_HEADER_BYTES)
    try:
        header = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProtocolError(f"message header is not JSON: {exc}") from None
    if not isinstance(header, dict):
        raise ProtocolError("message header must be a JSON object")
    header = cast("dict[str, Any]", header)  # a JSON object
    sizes: object = header.pop("payloads", [])
    if not isinstance(sizes, list) or not all(isinstance(n, int) and n >= 0 for n in cast("list[object]", sizes)):
        raise ProtocolError("message 'payloads' must be a list of byte counts")
    sizes = cast("list[int]", sizes)  # checked above
    payloads = [conn.recv_bytes() for _ in sizes]
    for expected, payload in zip(sizes, payloads):
        if len(payload) != expected:
            raise ProtocolError(f"payload of {len(payload)} bytes announced as {expected}")
    return header, payloads


__all__ = ["AuthenticationError", "ConnectionBusyError", "Endpoint", "ProtocolError", "connect", "listen",
           "new_endpoint", "private_runtime_dir", "receive_message", "send_message"]
