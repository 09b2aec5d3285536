"""Byte layout of one label slot (specification: docs/labels-format.md).

A slot is a 32-byte header followed by the zlib-compressed JSON label document. The header carries a
CRC of itself and of the payload, so a slot whose write was torn by a crash reads as invalid and the
store falls back to the other slot.
"""

from __future__ import annotations

import json
import struct
import zlib
from dataclasses import dataclass

from core.labels.model import LabelDocument
from core.recording.writer import LABEL_SLOT_BYTES

MAGIC = b"PGYMLBL1"
SLOT_FORMAT_VERSION = 1
# magic, slot format version, reserved (0), sequence number, payload length, payload CRC-32
_FIELDS = struct.Struct("<8sHHQII")
_HEADER_CRC = struct.Struct("<I")
HEADER_BYTES = _FIELDS.size + _HEADER_CRC.size  # 32
MAX_PAYLOAD_BYTES = LABEL_SLOT_BYTES - HEADER_BYTES


@dataclass(frozen=True)
class SlotHeader:
    sequence: int
    length: int
    crc: int


def encode_header(sequence: int, payload: bytes) -> bytes:
    fields = _FIELDS.pack(MAGIC, SLOT_FORMAT_VERSION, 0, sequence, len(payload), zlib.crc32(payload))
    return fields + _HEADER_CRC.pack(zlib.crc32(fields))


def decode_header(raw: bytes) -> SlotHeader | None:
    """The header, or None when the slot is empty, torn or not ours (zeros, garbage, a newer layout)."""
    if len(raw) < HEADER_BYTES:
        return None
    fields = raw[:_FIELDS.size]
    (header_crc,) = _HEADER_CRC.unpack_from(raw, _FIELDS.size)
    if zlib.crc32(fields) != header_crc:
        return None
    magic, version, _reserved, sequence, length, crc = _FIELDS.unpack(fields)
    if magic != MAGIC or version != SLOT_FORMAT_VERSION or length > MAX_PAYLOAD_BYTES:
        return None
    return SlotHeader(sequence, length, crc)


def payload_valid(header: SlotHeader, payload: bytes) -> bool:
    return len(payload) == header.length and zlib.crc32(payload) == header.crc


def encode_document(document: LabelDocument) -> bytes:
    text = json.dumps(document.to_json(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return zlib.compress(text.encode("utf-8"), 6)


def decode_document(payload: bytes) -> LabelDocument:
    return LabelDocument.from_json(json.loads(zlib.decompress(payload).decode("utf-8")))
