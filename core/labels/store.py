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

Nothing is read or written before the file proves to be an episode (format marker, version and required
groups: core/recording/reader.py's check_episode). Those refusals, and stored labels that are damaged,
raise LabelFileError, which is both a LabelStoreError and the readers' EpisodeFileError. `save_blocker`
answers "could labels be saved here?" without writing, so the studio can say so before anyone edits.

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
from core.recording.errors import EpisodeFileError
from core.recording.reader import check_episode, damaged_part, open_hdf5
from core.recording.writer import EPISODE_FORMAT_VERSION, LABEL_SLOT_BYTES, LABEL_SLOTS, create_label_slots

SUPPORTED_EPISODE_VERSIONS = (EPISODE_FORMAT_VERSION,)
_BINARY = getattr(os, "O_BINARY", 0)  # Windows would otherwise translate newlines
# Test seam: called with "payload-half" and "before-header" during a save, so a test can kill the
# process at exactly that point (tests/core/labels/test_labels_store.py). None in normal use.
_write_hook: Callable[[str], None] | None = None


class LabelStoreError(Exception):
    """Labels could not be read or saved; the message says why and what to do. The file is unchanged."""


class LabelFileError(LabelStoreError, EpisodeFileError):
    """The file is not a sound episode, or its stored labels are damaged: both a LabelStoreError (labels
    cannot be read or saved) and an EpisodeFileError (it names the file and the damaged part)."""


NOTHING_CHANGED = "Nothing was changed."


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
    _check_writable(path, adds_slots=offset is None)
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


def save_blocker(path: Path | str) -> str | None:
    """Why labels cannot be saved into `path` right now, or None when a save would go ahead. It makes the
    checks a save makes (episode, layout, stored copies, permissions, what the OS allows) and writes
    nothing, so a viewer can say so when the file opens, before anyone starts labelling."""
    path = Path(path)
    try:
        offset = _locate(path)
        _check_writable(path, adds_slots=offset is None)
        os.close(_open(path, os.O_RDWR))  # read-only mounts, ACLs: ask the OS itself; opening changes nothing
        if offset is not None:
            fd = _open(path, os.O_RDONLY)
            try:
                _check_size(fd, path, offset)
                _document(path, _newest(fd, offset, path))
            finally:
                os.close(fd)
    except LabelStoreError as exc:  # said before any attempt, so without the "nothing was changed" reassurance
        return str(exc).replace(f" {NOTHING_CHANGED}", "").replace("; nothing was changed", "")
    return None


def _locate(path: Path) -> int | None:
    """File offset of /labels/slots (None when the episode predates it), after checking the file is an
    episode of a known version with every required group. Opens read-only."""
    try:
        file = open_hdf5(path)
        with file:
            version = check_episode(path, file)
            if version not in SUPPORTED_EPISODE_VERSIONS:
                raise EpisodeFileError(path, "format_version attribute", f"says episode format version {version}, "
                                       f"whose label storage this PokeGym does not know (it knows "
                                       f"{SUPPORTED_EPISODE_VERSIONS}); update PokeGym Studio to label it")
            with damaged_part(path, "/labels"):
                return _slots_offset(path, file)
    except LabelFileError:
        raise
    except EpisodeFileError as exc:
        raise LabelFileError(exc.path, exc.part, f"{exc.problem} {NOTHING_CHANGED}") from exc


def _slots_offset(path: Path, file: h5py.File) -> int | None:
    if "labels" not in file or "slots" not in file["labels"]:  # not file.get: a damaged group is not "missing"
        return None
    slots = file["labels"]["slots"]
    offset = slots.id.get_offset()
    layout = slots.id.get_create_plist().get_layout()
    if (slots.shape != (LABEL_SLOTS, LABEL_SLOT_BYTES) or slots.dtype != "u1" or layout != h5py.h5d.CONTIGUOUS
            or slots.compression is not None or offset is None):
        raise LabelFileError(path, "/labels/slots", "does not have the expected layout (docs/labels-format.md); "
                             f"refusing to write into it. {NOTHING_CHANGED}")
    return int(offset)


def _read_only(path: Path) -> str:
    """Why `path` cannot be written ("" when it can): no write bits (even root honours those: someone protected
    it on purpose), a read-only file system, or no write access."""
    if not stat.S_IMODE(path.stat().st_mode) & 0o222:
        return "is marked read-only"
    if hasattr(os, "statvfs") and os.statvfs(path).f_flag & os.ST_RDONLY:
        return "is on a read-only file system (Read-only file system)"
    if not os.access(path, os.W_OK):
        return "is not writable by this user"
    return ""


def _check_writable(path: Path, adds_slots: bool = False) -> None:
    why = _read_only(path)
    if why:
        raise LabelStoreError(f"{path} {why}, so labels cannot be saved into it; nothing was changed. Make it "
                              f"writable (e.g. chmod u+w {str(path)!r}, or copy it to a writable disk) or label "
                              "a copy.")
    folder = path.parent
    why = _read_only(folder) if adds_slots else ""
    if why:
        raise LabelStoreError(f"{path} was recorded before labels were kept in /labels/slots, so its first label save "
                              f"writes a new copy of it into {folder}, which {why}; nothing was changed. Make the "
                              f"folder writable (e.g. chmod u+w {str(folder)!r}) or label a copy elsewhere.")


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
        raise LabelFileError(path, "/labels/slots", f"the file is truncated: it ends inside the label slots. "
                             f"{NOTHING_CHANGED}")


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


def _newest(fd: int, offset: int, path: Path) -> _Copy | None:
    """The valid slot with the highest sequence number; None when both slots are empty (no labels yet).

    Two slots that hold something but neither checks out cannot come from one interrupted save (that
    leaves the other copy intact): refuse, rather than let a save start over and drop the labels."""
    found: list[_Copy] = []
    damaged = 0
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
        raise LabelFileError(path, "/labels/slots", "both stored copies of the labels "
                             "are damaged, so the labels are unreadable and are never saved over. Restore the file "
                             f"from a backup to recover them. {NOTHING_CHANGED}")
    return max(found, key=lambda copy: copy.header.sequence, default=None)


def _document(path: Path, newest: _Copy | None) -> LabelDocument:
    if newest is None:
        return LabelDocument()
    try:
        document = decode_document(newest.payload)
    except (ValueError, KeyError, TypeError, AttributeError, zlib.error) as exc:  # checksum fine, content not ours
        raise LabelFileError(path, "/labels/slots", f"the stored labels are not a valid label document ({exc}). "
                             f"{NOTHING_CHANGED}") from exc
    if document.format_version > LABELS_FORMAT_VERSION:
        raise LabelFileError(path, "/labels/slots", f"holds labels in format {document.format_version}, newer than "
                             f"this PokeGym reads ({LABELS_FORMAT_VERSION}); update PokeGym. {NOTHING_CHANGED}")
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
    except (OSError, KeyError, RuntimeError, TypeError, ValueError) as exc:  # h5py on a damaged /labels too
        raise LabelStoreError(f"could not add label storage to {path}, an episode recorded before labels were "
                              f"kept in /labels/slots ({exc}). Close it in other programs, check there is room for "
                              "one copy of it next to it, and save again; the original was not changed.") from exc
    finally:
        temporary.unlink(missing_ok=True)
