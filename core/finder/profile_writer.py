"""Writing what the finder found as a profile the evaluator loads unchanged (docs/profile-format.md).

The block starts at the signature or at the value, whichever comes first, so that every field
offset is positive and the signature is checked inside the block on every read. Positions are
written in the evaluator's convention: x and y on the ground, z up. A "y up" triple (Minetest,
most engines) stores its height in the middle, so its fields are x at +0, z at +4, y at +8.
"""

from __future__ import annotations

import datetime as dt
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from core.evaluation.profile import PROFILE_FORMAT_VERSION, Profile, ProfileError
from core.finder.ranking import turn_sign
from core.finder.signature import VALUE_BYTES, Pick


@dataclass(frozen=True)
class FlagField:
    """A flags word found by the flag finder, relative to the position value."""

    relative: int
    type: str = "flags64"
    names: tuple[str, ...] = ()


@dataclass
class ProfileDraft:
    name: str
    game: str
    game_version: str | None
    pick: Pick | None                  # None when the block is reached through a pointer root
    vertical: int                      # 1: y up, 2: z up
    observed: tuple[float, float, float]
    scale: float = 1.0
    units: str | None = None
    flags: FlagField | None = None
    pointer: dict[str, Any] | None = None
    scan_perms: str = "rw"
    path_contains: str | None = None
    provenance: list[str] = field(default_factory=list[str])
    right_turn: float | None = None    # the found copy's (core/finder/ranking.py), written as `ground_turn`


def coordinate_range(observed: tuple[float, float, float], scale: float) -> list[float]:
    """Generous validation bounds: a power of ten well above anything seen, never below 10^4."""
    largest = max(abs(v * scale) for v in observed)
    bound = 10.0 ** max(4, math.ceil(math.log10(largest * 100 + 1000)))
    return [-bound, bound]


def ground_turn(right_turn: float | None) -> str | None:
    """The profile's `ground_turn` for a measured right_turn: how strafing right turns from forward, seen from above."""
    return {-1: "clockwise", 1: "counterclockwise"}.get(turn_sign(right_turn))


def build(draft: ProfileDraft) -> dict[str, Any]:
    starts, ends = [0], [VALUE_BYTES]
    if draft.pick is not None:
        starts.append(draft.pick.start)
        ends.append(draft.pick.end)
    if draft.flags is not None:
        size = {"flags64": 8, "flags32": 4, "u8": 1, "u16": 2, "u32": 4, "u64": 8}[draft.flags.type]
        starts.append(draft.flags.relative)
        ends.append(draft.flags.relative + size)
    block_start = min(starts)
    value_at = -block_start
    second, up = (4, 8) if draft.vertical == 2 else (8, 4)
    bounds = coordinate_range(draft.observed, draft.scale)
    coordinate: dict[str, Any] = {"type": "f32", "range": bounds}
    if draft.scale != 1.0:
        coordinate["scale"] = draft.scale
    if draft.units:
        coordinate["units"] = draft.units
    fields: dict[str, Any] = {
        "x": {"offset": value_at, **coordinate},
        "y": {"offset": value_at + second, **coordinate},
        "z": {"offset": value_at + up, **coordinate},
    }
    data: dict[str, Any] = {
        "format_version": PROFILE_FORMAT_VERSION,
        "name": draft.name,
        "game": draft.game,
        "game_version": draft.game_version,
        "status": "working",
        "signature": None,
        "block_size": max(ends) - block_start,
        "scan_regions": {"perms": draft.scan_perms, **({"path_contains": draft.path_contains}
                                                       if draft.path_contains else {})},
        "fields": fields,
    }
    if draft.pick is not None:
        data["signature"] = {"pattern": draft.pick.pattern.text, "base_offset": block_start - draft.pick.start,
                             "max_mismatches": draft.pick.tolerance}
    if draft.pointer is not None:
        data["pointer"] = draft.pointer
    if draft.flags is not None:
        fields["flags"] = {"offset": draft.flags.relative - block_start, "type": draft.flags.type}
        data["flag_field"] = "flags"
        data["flags"] = list(draft.flags.names)
    turn = ground_turn(draft.right_turn)
    if turn is not None:
        data["ground_turn"] = turn
    data["notes"] = " ".join(draft.provenance)
    return data


def validate(data: dict[str, Any], where: str = "the generated profile") -> Profile:
    try:
        return Profile.model_validate(data)
    except ValueError as exc:
        raise ProfileError(f"{where} does not validate (a finder bug; please report it): {exc}") from None


def render(data: dict[str, Any], draft: ProfileDraft) -> str:
    up = "y" if draft.vertical == 1 else "z"
    header = [
        f"# Made by PokeGym Studio's memory finder on {dt.date.today().isoformat()} for {draft.game}"
        + (f" {draft.game_version}" if draft.game_version else "") + ".",
        f"# Position: three float32 values, {up} up in memory; written here as x, y on the ground and z up.",
        "# Format: docs/profile-format.md. How it was found: docs/finding-memory.md.",
    ]
    body = yaml.dump(data, Dumper=_PlainDumper, sort_keys=False, allow_unicode=True, width=100)
    return "\n".join(header) + "\n" + body


class _PlainDumper(yaml.SafeDumper):
    """No &anchors / *aliases: a profile is read by people too."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def write(path: Path, data: dict[str, Any], draft: ProfileDraft) -> Profile:
    """Validate, then write atomically (a half-written profile never replaces a good one)."""
    profile = validate(data, str(path))
    text = render(data, draft)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)
    return profile
