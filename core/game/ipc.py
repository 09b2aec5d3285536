"""The authenticated local channel between the harness and a game process.

Transport: multiprocessing.connection over a Unix socket inside a private (0700)
directory, or a named pipe on Windows. Both ends prove knowledge of a random 32-byte
key with an HMAC challenge before anything else is exchanged. Messages are JSON
headers plus optional raw byte payloads, sent with send_bytes/recv_bytes, so nothing
is ever unpickled.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
import tempfile
import threading
from dataclasses import dataclass
from multiprocessing import AuthenticationError
from multiprocessing.connection import Client, Connection, Listener
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


def listen(endpoint: Endpoint) -> Listener:
    return Listener(address=endpoint.address, family=endpoint.family, authkey=endpoint.authkey)


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
