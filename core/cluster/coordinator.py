"""The per-run coordinator: a Ray actor pinned to the driver's node.

* The stop switch: Ctrl+C on the driver sets it; running episodes poll it and stop after their step, and
  episodes that had not begun never start.
* The table of running episodes (node, worker, start time): the progress display counts it, and the
  driver's time-limit backstop reads it.
* The file sink: episode files arrive in chunks of at most CHUNK_BYTES (never whole in memory), are written
  to a hidden temporary name next to their place in the run folder, checked against the sender's SHA-256,
  then renamed into place atomically. A retried episode's upload replaces its earlier file the same way.

It never writes results.jsonl: the driver does.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import threading
import time
from pathlib import Path
from typing import Any

CHUNK_BYTES = 4 << 20
# What a node may write into the run folder, and nothing else (a name never climbs out of its folder).
_ALLOWED = re.compile(r"(episodes|experience/episodes)/[^/\x00]+\.(h5|json)")


class UploadError(RuntimeError):
    pass


def _target(out: Path, relative: str) -> Path:
    if not _ALLOWED.fullmatch(relative) or relative.rsplit("/", 1)[1].startswith("."):
        raise UploadError(f"refusing to write {relative!r} into the run folder")
    return out / relative


class RunCoordinator:
    def __init__(self, out: str) -> None:
        self.out = Path(out)
        self._lock = threading.Lock()
        self._stopping = False
        self._running: dict[str, dict[str, Any]] = {}
        self._uploads: dict[str, tuple[Path, Path, int]] = {}  # token -> (part file, target, fd)
        for folder in (self.out / "episodes", self.out / "experience" / "episodes"):
            for stale in folder.glob(".*.part") if folder.is_dir() else ():
                stale.unlink(missing_ok=True)  # uploads of a run that was aborted part-way

    # -- the stop switch and the running table ----------------------------------------------
    def begin(self, key: str, attempt: str, node: str, pid: int) -> bool:
        """An episode's task starts (again, after a lost worker); False: the run is stopping, do not play."""
        with self._lock:
            if self._stopping:
                return False
            tries = self._running.get(key, {}).get("tries", 0) + 1
            self._running[key] = {"attempt": attempt, "node": node, "pid": pid, "started": time.time(),
                                  "tries": tries}
            return True

    def end(self, key: str, attempt: str) -> None:
        with self._lock:
            if self._running.get(key, {}).get("attempt") == attempt:
                del self._running[key]

    def stop(self) -> None:
        with self._lock:
            self._stopping = True

    def stopping(self) -> bool:
        return self._stopping

    def running(self) -> dict[str, dict[str, Any]]:
        with self._lock:
            return {key: dict(entry) for key, entry in self._running.items()}

    # -- the file sink ------------------------------------------------------------------------
    def open_file(self, relative: str) -> str:
        target = _target(self.out, relative)
        target.parent.mkdir(parents=True, exist_ok=True)
        token = secrets.token_hex(8)
        part = target.parent / f".{target.name}.{token}.part"
        for stale in target.parent.glob(f".{target.name}.*.part"):
            stale.unlink(missing_ok=True)  # an earlier try's upload, cut off when its worker died
        fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with self._lock:
            self._uploads[token] = (part, target, fd)
        return token

    def write(self, token: str, offset: int, data: bytes) -> int:
        if len(data) > CHUNK_BYTES:
            raise UploadError(f"a chunk of {len(data)} bytes is larger than {CHUNK_BYTES}")
        with self._lock:
            upload = self._uploads.get(token)
        if upload is None:
            raise UploadError("unknown or finished upload")
        return os.pwrite(upload[2], data, offset)  # by offset: chunks may arrive on different actor threads

    def commit(self, token: str, size: int, sha256: str) -> None:
        with self._lock:
            part, target, fd = self._uploads.pop(token)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        digest = hashlib.sha256()
        with part.open("rb") as handle:
            while chunk := handle.read(CHUNK_BYTES):
                digest.update(chunk)
        if part.stat().st_size != size or digest.hexdigest() != sha256:
            part.unlink(missing_ok=True)
            raise UploadError(f"{target.name} arrived damaged ({part.stat().st_size if part.exists() else 0} "
                              f"of {size} bytes or a different checksum); the episode will count as an error")
        os.replace(part, target)

    def discard(self, token: str) -> None:
        with self._lock:
            upload = self._uploads.pop(token, None)
        if upload is not None:
            with contextlib.suppress(OSError):
                os.close(upload[2])
            upload[0].unlink(missing_ok=True)
