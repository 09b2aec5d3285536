"""Labels saved inside the episode file, crash-safe (byte layout and schema: docs/labels-format.md).

HDF5 writes in r+ mode can corrupt a file when the process dies mid-write, so labels never go through
HDF5 once the file exists. /labels/slots is a contiguous, unfiltered (2, SLOT_BYTES) byte dataset with a
fixed file offset; each slot holds a checksummed copy of the whole label document (every annotator). A
save writes the slot that does not hold the newest valid copy with plain positional writes and fsync,
payload first and the header that vouches for it last, so a kill at any point leaves the previous copy
intact and readable. Nothing outside /labels/slots is ever written.

Episodes recorded before the slots existed get them on their first save: the dataset is added with h5py
in r+ mode to a copy of the file, which then atomically replaces the original, so a crash during that
one-time step leaves the original untouched (it costs one copy of the file, once).

Two processes saving labels into the same file at the same moment are not coordinated: the studio
should keep one writer per file.
"""

from __future__ import annotations

import os
import shutil
import stat
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import h5py

from core.labels.model import AUTO_ANNOTATOR, LABELS_FORMAT_VERSION, AnnotatorLabels, LabelDocument
from core.labels.slots import (
    HEADER_BYTES,
    MAX_PAYLOAD_BYTES,
    SlotHeader,
    decode_document,
    decode_header,
    encode_document,
    encode_header,
    payload_valid,
)
from core.recording.writer import (
    EPISODE_FORMAT,
    EPISODE_FORMAT_VERSION,
    LABEL_SLOT_BYTES,
    LABEL_SLOTS,
    create_label_slots,
)

SUPPORTED_EPISODE_VERSIONS = (EPISODE_FORMAT_VERSION,)
_BINARY = getattr(os, "O_BINARY", 0)  # Windows would otherwise translate newlines
# Test seam: called with "payload-half" and "before-header" during a save, so a test can kill the
# process at exactly that point (tests/test_labels_store.py). None in normal use.
_write_hook: Callable[[str], None] | None = None


class LabelStoreError(Exception):
    """Labels could not be read or saved; the message says why and what to do. The file is unchanged."""


@dataclass(frozen=True)
class _Copy:
    slot: int
    header: SlotHeader
    payload: bytes


# -- public API --------------------------------------------------------------------------------
def read_labels(path: Path | str) -> LabelDocument:
    """Every annotator's labels (an empty document when there are none). Opens the file read-only."""
    path = Path(path)
    offset = _locate(path)
    if offset is None:
        return LabelDocument()
    fd = _open(path, os.O_RDONLY)
    try:
        _check_size(fd, path, offset)
        return _document(path, _newest(fd, offset, path))
    finally:
        os.close(fd)


def save_labels(path: Path | str, labels: AnnotatorLabels) -> None:
    """Store one annotator's labels, keeping every other annotator's. Refuses (LabelStoreError, file
    unchanged) a file that is not a readable, writable episode of a known format version."""
    path = Path(path)
    if labels.annotator == AUTO_ANNOTATOR:
        raise LabelStoreError(f"the annotator name {AUTO_ANNOTATOR!r} is reserved for the automatic suggestions; "
                              "choose another name")
    offset = _locate(path)
    _check_writable(path)
    if offset is None:
        _add_slots(path)
        offset = _locate(path)
        if offset is None:
            raise LabelStoreError(f"{path}: adding /labels/slots did not take effect; the labels were not saved")
    fd = _open(path, os.O_RDWR)
    try:
        _check_size(fd, path, offset)
        newest = _newest(fd, offset, path)
        payload = encode_document(_document(path, newest).with_annotator(labels))
        if len(payload) > MAX_PAYLOAD_BYTES:
            raise LabelStoreError(f"the labels for {path} take {len(payload)} bytes compressed, more than a slot's "
                                  f"{MAX_PAYLOAD_BYTES}; shorten the notes. Nothing was saved.")
        slot = 0 if newest is None else 1 - newest.slot  # never the slot holding the newest copy
        sequence = 1 if newest is None else newest.header.sequence + 1
        _write_slot(fd, offset + slot * LABEL_SLOT_BYTES, sequence, payload)
        check = _newest(fd, offset, path)
        if check is None or (check.slot, check.header.sequence) != (slot, sequence):
            raise LabelStoreError(f"{path}: the saved labels did not read back; the previous copy is still there")
    finally:
        os.close(fd)


def _locate(path: Path) -> int | None:
    """File offset of /labels/slots (None when the episode predates it), after checking the file is an
    episode of a known version. Opens read-only."""
    if not path.is_file():
        raise LabelStoreError(f"{path} does not exist or is not a file")
    try:
        file = h5py.File(path, "r")
    except OSError as exc:
        raise LabelStoreError(f"cannot open {path} as an episode file ({exc}). It may be truncated or corrupt, "
                              "or still being recorded by another process; nothing was changed. Restore it from a "
                              "backup or record the episode again.") from exc
    with file:
        try:
            return _slots_offset(path, file)
        except (KeyError, RuntimeError, ValueError) as exc:  # h5py's errors on damaged metadata
            raise LabelStoreError(f"{path} looks damaged ({exc}); nothing was changed") from exc


def _slots_offset(path: Path, file: h5py.File) -> int | None:
    fmt = file.attrs.get("format")
    if (fmt.decode() if isinstance(fmt, bytes) else fmt) != EPISODE_FORMAT:
        raise LabelStoreError(f"{path} is not a PokeGym episode file (no format={EPISODE_FORMAT!r}); "
                              "labels can only be stored in episodes recorded by PokeGym")
    version = file.attrs.get("format_version")
    if version is None or int(version) not in SUPPORTED_EPISODE_VERSIONS:
        raise LabelStoreError(f"{path} uses episode format version {version}, which this PokeGym does not know "
                              f"(it knows {SUPPORTED_EPISODE_VERSIONS}); update PokeGym to label it. "
                              "Nothing was changed.")
    labels = file.get("labels")
    if labels is None or "slots" not in labels:
        return None
    slots = labels["slots"]
    offset = slots.id.get_offset()
    layout = slots.id.get_create_plist().get_layout()
    if (slots.shape != (LABEL_SLOTS, LABEL_SLOT_BYTES) or slots.dtype != "u1" or layout != h5py.h5d.CONTIGUOUS
            or slots.compression is not None or offset is None):
        raise LabelStoreError(f"{path}: /labels/slots does not have the expected layout (docs/labels-format.md); "
                              "refusing to write into it. Nothing was changed.")
    return int(offset)


def _check_writable(path: Path) -> None:
    # Even root honours a file marked read-only (no write bits): someone protected it on purpose.
    if not stat.S_IMODE(path.stat().st_mode) & 0o222 or not os.access(path, os.W_OK):
        raise LabelStoreError(f"{path} is read-only, so labels cannot be saved into it; nothing was changed. "
                              f"Make it writable (e.g. chmod u+w {str(path)!r}) or label a copy.")


def _open(path: Path, flags: int) -> int:
    try:
        return os.open(path, flags | _BINARY)
    except PermissionError as exc:
        raise LabelStoreError(f"{path} cannot be opened for {'writing' if flags & os.O_RDWR else 'reading'} "
                              f"({exc}); check its permissions. Nothing was changed.") from exc
    except OSError as exc:
        raise LabelStoreError(f"cannot open {path}: {exc}") from exc


def _check_size(fd: int, path: Path, offset: int) -> None:
    if os.fstat(fd).st_size < offset + LABEL_SLOTS * LABEL_SLOT_BYTES:
        raise LabelStoreError(f"{path} is truncated (it ends inside /labels/slots); nothing was changed")


# -- reading and writing slots -----------------------------------------------------------------
def _read_at(fd: int, offset: int, size: int) -> bytes:
    if hasattr(os, "pread"):
        return os.pread(fd, size, offset)
    os.lseek(fd, offset, os.SEEK_SET)
    return os.read(fd, size)


def _write_at(fd: int, offset: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        if hasattr(os, "pwrite"):
            written = os.pwrite(fd, view, offset)
        else:  # Windows has no pwrite
            os.lseek(fd, offset, os.SEEK_SET)
            written = os.write(fd, view)
        view, offset = view[written:], offset + written


def _newest(fd: int, offset: int, path: Path | None = None) -> _Copy | None:
    """The valid slot with the highest sequence number; None when both slots are empty (no labels yet).

    Two slots that hold something but neither checks out cannot come from one interrupted save (that
    leaves the other copy intact): refuse, rather than let a save start over and drop the labels."""
    found, damaged = [], 0
    for slot in range(LABEL_SLOTS):
        start = offset + slot * LABEL_SLOT_BYTES
        raw_header = _read_at(fd, start, HEADER_BYTES)
        header = decode_header(raw_header)
        if header is None:
            damaged += any(raw_header)
            continue
        payload = _read_at(fd, start + HEADER_BYTES, header.length)
        if payload_valid(header, payload):
            found.append(_Copy(slot, header, payload))
        else:
            damaged += 1
    if not found and damaged == LABEL_SLOTS:
        raise LabelStoreError(f"{path or 'the episode file'}: both stored copies of the labels are damaged; "
                              "nothing was changed. Restore the file from a backup to recover them.")
    return max(found, key=lambda copy: copy.header.sequence, default=None)


def _document(path: Path, newest: _Copy | None) -> LabelDocument:
    if newest is None:
        return LabelDocument()
    try:
        document = decode_document(newest.payload)
    except (ValueError, KeyError, TypeError, AttributeError, zlib.error) as exc:  # checksum fine, content not ours
        raise LabelStoreError(f"{path}: the stored labels are not a valid label document ({exc})") from exc
    if document.format_version > LABELS_FORMAT_VERSION:
        raise LabelStoreError(f"{path} holds labels in format {document.format_version}, newer than this PokeGym "
                              f"reads ({LABELS_FORMAT_VERSION}); update PokeGym. Nothing was changed.")
    return document


def _write_slot(fd: int, slot_offset: int, sequence: int, payload: bytes) -> None:
    half = len(payload) // 2
    _write_at(fd, slot_offset + HEADER_BYTES, payload[:half])
    if _write_hook is not None:
        _write_hook("payload-half")
    _write_at(fd, slot_offset + HEADER_BYTES + half, payload[half:])
    os.fsync(fd)  # the payload is on disk before the header that vouches for it
    if _write_hook is not None:
        _write_hook("before-header")
    _write_at(fd, slot_offset, encode_header(sequence, payload))
    os.fsync(fd)


def _add_slots(path: Path) -> None:
    """Give an episode recorded before /labels/slots existed its slots, via an atomically swapped copy."""
    temporary = path.with_name(f".{path.name}.labels-{os.getpid()}.tmp")
    try:
        shutil.copyfile(path, temporary)
        with h5py.File(temporary, "r+") as file:
            create_label_slots(file.require_group("labels"))
        shutil.copymode(path, temporary)
        fd = os.open(temporary, os.O_RDWR | _BINARY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
        if os.name == "posix":  # make the rename itself durable
            directory = os.open(path.parent, os.O_RDONLY)
            try:
                os.fsync(directory)
            finally:
                os.close(directory)
    except (OSError, TypeError, ValueError) as exc:
        raise LabelStoreError(f"could not add label storage to {path}, an episode recorded before labels were "
                              f"kept in /labels/slots ({exc}). Close it in other programs, check there is room for "
                              "one copy of it next to it, and save again; the original was not changed.") from exc
    finally:
        temporary.unlink(missing_ok=True)
