"""Game profiles (assets/profiles/*.yaml): how to find and decode a game's state in memory.

See docs/profile-format.md. Loading validates the whole file and reports every problem
with the file name and the field's path.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from core.memory.pattern import Pattern, PatternError, parse_pattern
from core.memory.tolerant import max_tolerance, mismatches_at
from core.yaml_file import explain, read_yaml

PROFILE_FORMAT_VERSION = 1
FieldType = Literal["u8", "u16", "u32", "u64", "i32", "f32", "flags64", "flags32"]
_STRUCT = {"u8": "<B", "u16": "<H", "u32": "<I", "u64": "<Q", "i32": "<i", "f32": "<f", "flags64": "<Q",
           "flags32": "<I"}


class ProfileError(ValueError):
    """A profile file that cannot be used; the message names the file and the field."""


class BlockInvalid(ValueError):
    """Bytes at a candidate address are not a valid state block (stale copy, torn read, decoy)."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Signature(_Model):
    pattern: str
    base_offset: int = 0  # block start = match address + base_offset
    # Literal bytes allowed to differ (core/memory/tolerant.py): an exact match is always preferred.
    max_mismatches: int = Field(default=0, ge=0)

    @field_validator("pattern")
    @classmethod
    def _parses(cls, text: str) -> str:
        try:
            parse_pattern(text)
        except PatternError as exc:
            raise ValueError(str(exc)) from None
        return text

    @model_validator(mode="after")
    def _tolerable(self) -> Signature:
        limit = max_tolerance(parse_pattern(self.pattern))
        if self.max_mismatches > limit:
            raise ValueError(f"max_mismatches {self.max_mismatches} is too many for this pattern: at most {limit}, "
                             "so that three quarters of its literal bytes still have to match")
        return self


class FieldSpec(_Model):
    offset: int | None = Field(ge=0, description="None only in templates: the user must find it")
    type: FieldType
    range: tuple[float, float] | None = None  # checked on the scaled value
    # Values behind pointers: read a pointer at block + offset, add the first offset, read a pointer
    # there, ..., add the last offset: the value is there (Cheat Engine's notation [[b+o]+o1]+o2).
    pointer_chain: list[int] | None = None
    scale: float = 1.0                        # sample value = stored value x scale (Minetest: 0.1, nodes x 10)
    units: str | None = None                  # what the scaled value is in ("m", "nodes"), for people

    @model_validator(mode="after")
    def _scalable(self) -> FieldSpec:
        if self.scale != 1.0 and self.type.startswith("flags"):
            raise ValueError("flag fields cannot be scaled")
        return self  # a zero scale is refused with the field's name by Profile


class PointerRoot(_Model):
    """Where the block is when no heap signature survives a restart: a static pointer chain from a
    module (the executable or a library): block = [[[module base + offset] + chain[0]] + ...]."""

    module: str = Field(min_length=1)
    offset: int = Field(ge=0)
    chain: list[int] = []


class Checksum(_Model):
    algorithm: Literal["crc32"]
    start: int = Field(ge=0)
    length: int = Field(gt=0)
    field: str


class ScanRegions(_Model):
    """Where the block can live; narrowing this makes scans of multi-GiB emulators fast."""

    perms: str = "rw"
    path_contains: str | None = None


class Equals(_Model):
    field: str
    equals: int


class Profile(_Model):
    format_version: Literal[1]
    name: str
    game: str
    status: Literal["working", "template"] = "working"
    game_version: str | None = None  # the game build the signature and offsets were made for (launches check it)
    signature: Signature | None
    pointer: PointerRoot | None = None        # instead of (or as well as) a signature
    block_size: int = Field(gt=0, le=1 << 20)
    scan_regions: ScanRegions = ScanRegions()
    layout_version: Equals | None = None
    checksum: Checksum | None = None
    fields: dict[str, FieldSpec]
    flag_field: str | None = None
    flags: list[str] = []
    # How strafing right turns from walking forward on x, y seen from above (z up): clockwise on a map's axes
    # (x east, y north), counterclockwise where they are mirrored. Written by the finder; checked by `verify`.
    ground_turn: Literal["clockwise", "counterclockwise"] | None = None
    # Ignored: the action set moved to the backend file (docs/backend-format.md#actions). Profiles written before
    # that still load, whatever they hold here.
    actions: object = None
    notes: str = ""

    @model_validator(mode="after")
    def _consistent(self) -> Profile:
        problems: list[str] = []
        for name, spec in self.fields.items():
            if spec.offset is None:
                if self.status == "working":
                    problems.append(f"field {name!r} has no offset; only a template may leave it open")
                continue
            # A field behind pointers keeps only its first pointer (8 bytes) in the block.
            end = spec.offset + (8 if spec.pointer_chain else struct.calcsize(_STRUCT[spec.type]))
            if end > self.block_size:
                problems.append(f"field {name!r} ends at byte {end}, past block_size {self.block_size}")
            if spec.scale == 0 or spec.scale != spec.scale:
                problems.append(f"field {name!r} has scale {spec.scale}: use a finite, non-zero number")
        referenced = [self.flag_field] if self.flag_field else []
        if self.checksum:
            referenced.append(self.checksum.field)
            if self.checksum.start + self.checksum.length > self.block_size:
                problems.append("checksum range runs past block_size")
        if self.layout_version:
            referenced.append(self.layout_version.field)
        problems += [f"unknown field {name!r} referenced" for name in referenced if name not in self.fields]
        if self.status == "working" and self.signature is None and self.pointer is None:
            problems.append("a working profile needs a signature or a pointer root")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    @property
    def position_units(self) -> str | None:
        """What positions are in (the x field's `units`: "m", "nodes", a game's own "units"), for what people
        read: plot axes, scale bars, radii. None: the profile does not say."""
        spec = self.fields.get("x")
        return spec.units if spec is not None else None

    def check_usable(self) -> None:
        """Raise ProfileError if the evaluator cannot use this profile (a template)."""
        if self.status == "template" or (self.signature is None and self.pointer is None):
            self.compiled_signature()

    def compiled_signature(self) -> Pattern:
        if self.signature is None or self.status == "template":
            raise ProfileError(f"profile {self.name!r} is a template: fill in its signature and field offsets "
                               "for your game version first (see its notes and docs/profile-format.md)")
        return parse_pattern(self.signature.pattern)

    def decode(self, raw: bytes, follow: Callable[[int, list[int], int], bytes] | None = None) -> dict[str, Any]:
        """Decode and validate one block; raises BlockInvalid if anything is off.

        Fields with a pointer_chain need `follow(address_offset, chain, size)`, which reads `size`
        bytes at the end of the chain starting at block + offset (see locate.read_block)."""
        if len(raw) < self.block_size:
            raise BlockInvalid(f"short read: {len(raw)} of {self.block_size} bytes")
        if self.signature is not None:
            pattern = self.compiled_signature()
            wrong = mismatches_at(pattern, raw, -self.signature.base_offset)
            if wrong is None or wrong > self.signature.max_mismatches:
                raise BlockInvalid("signature no longer present")
        values: dict[str, Any] = {}
        for name, spec in self.fields.items():
            if spec.offset is None:
                raise BlockInvalid(f"field {name!r} has no offset (template profile)")
            fmt = _STRUCT[spec.type]
            if spec.pointer_chain:
                if follow is None:
                    raise BlockInvalid(f"field {name!r} sits behind pointers: decode it with a memory reader")
                data = follow(spec.offset, spec.pointer_chain, struct.calcsize(fmt))
                if len(data) < struct.calcsize(fmt):
                    raise BlockInvalid(f"field {name!r}: its pointer chain leads to unreadable memory")
                (value,) = struct.unpack_from(fmt, data, 0)
            else:
                (value,) = struct.unpack_from(fmt, raw, spec.offset)
            if spec.type == "f32" and value != value:
                raise BlockInvalid(f"{name} is NaN")
            if spec.scale != 1.0:
                value = value * spec.scale
            if spec.range is not None and not spec.range[0] <= value <= spec.range[1]:
                raise BlockInvalid(f"{name}={value} outside {spec.range}")
            values[name] = value
        if self.layout_version is not None and values[self.layout_version.field] != self.layout_version.equals:
            raise BlockInvalid(f"layout version {values[self.layout_version.field]} is not "
                               f"{self.layout_version.equals}")
        if self.checksum is not None:
            c = self.checksum
            if zlib.crc32(raw[c.start:c.start + c.length]) != values[c.field]:
                raise BlockInvalid("checksum mismatch")
        return values

    def flag_names(self, bits: int) -> list[str]:
        return [name for i, name in enumerate(self.flags) if bits >> i & 1]


def load_profile(path: Path) -> Profile:
    try:
        data, root = read_yaml(Path(path), "profile")
    except ValueError as exc:
        raise ProfileError(str(exc)) from None
    if not isinstance(data, dict):
        raise ProfileError(f"{path}:1: a profile must hold a mapping (format_version, game, signature, fields, ...)")
    try:
        return Profile.model_validate(data)
    except ValidationError as exc:
        raise ProfileError(explain(path, root, exc, f"profile (format {PROFILE_FORMAT_VERSION})", Profile)) from None
