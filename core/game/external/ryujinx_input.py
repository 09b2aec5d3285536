"""Ryujinx's input config (Config.json, `input_config`): make sure player 1 is our virtual pad.

Ryujinx binds a player to a controller by an id `"{joystick index}-{GUID}"`: SDL2's joystick GUID,
formatted as a .NET Guid (Ryujinx.Input.SDL2/SDL2GamepadDriver.cs). Our pad is created before the
emulator starts; this module checks, before every launch, that player 1's entry is an SDL2 gamepad
whose GUID names our pad's vendor and product (045e:028e, an Xbox 360 pad), and with `write` it
rewrites only that entry's `id` (after a backup), keeping every button mapping the owner chose.

On Linux the full id our uinput pad gets is computed with SDL 2.26+'s rules (bus, CRC-16 of the
name, vendor, product, version). Neither rule set can be checked against a real SDL here: see
docs/ryujinx.md for the one-time check in Ryujinx's input dialog.
"""

from __future__ import annotations

import json
import shutil
import struct
import time
from pathlib import Path
from typing import Any, cast

from core.game.errors import GameStartError

XBOX360_VENDOR, XBOX360_PRODUCT = 0x045E, 0x028E
BUS_USB = 0x03


def sdl_crc16(data: bytes, crc: int = 0) -> int:
    """SDL_crc16: CRC-16/ARC (reflected polynomial 0xA001), as SDL stamps device names into GUIDs."""
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    return crc


def sdl_linux_guid(bus: int, vendor: int, product: int, version: int, name: str) -> bytes:
    """SDL_CreateJoystickGUID for an evdev device (SDL 2.26 and later; driver signature and data 0)."""
    return struct.pack("<HHHHHHHBB", bus, sdl_crc16(name.encode()), vendor, 0, product, 0, version, 0, 0)


def dotnet_guid_text(raw: bytes) -> str:
    """new Guid(byte[]).ToString(): the first three fields little-endian, the last eight bytes as they are."""
    a, b, c = struct.unpack_from("<IHH", raw)
    tail = raw[8:].hex()
    return f"{a:08x}-{b:04x}-{c:04x}-{tail[:4]}-{tail[4:]}"


def dotnet_guid_bytes(text: str) -> bytes:
    parts = text.split("-")
    if len(parts) != 5:
        raise ValueError(f"{text!r} is not a Guid")
    head = struct.pack("<IHH", int(parts[0], 16), int(parts[1], 16), int(parts[2], 16))
    return head + bytes.fromhex(parts[3] + parts[4])


def uinput_pad_id(name: str, index: int = 0, version: int = 0x110) -> str:
    """The Ryujinx id of our uinput pad (see pads.UinputPad) at joystick `index`."""
    return f"{index}-{dotnet_guid_text(sdl_linux_guid(BUS_USB, XBOX360_VENDOR, XBOX360_PRODUCT, version, name))}"


def names_our_pad(pad_id: str) -> bool:
    """Whether a Ryujinx gamepad id's GUID carries our pad's vendor and product ids."""
    index, _, guid = pad_id.partition("-")
    try:
        raw = dotnet_guid_bytes(guid)
    except ValueError:
        return False
    vendor, _, product = struct.unpack_from("<HHH", raw, 4)
    return index.isdigit() and (vendor, product) == (XBOX360_VENDOR, XBOX360_PRODUCT)


def _player_entry(config: dict[str, Any], player: str) -> dict[str, Any] | None:
    entries = config.get("input_config")
    if not isinstance(entries, list):
        return None
    objects = [cast("dict[str, Any]", e) for e in cast("list[object]", entries) if isinstance(e, dict)]  # JSON
    return next((e for e in objects if e.get("player_index") == player), None)


def check_input_config(path: Path, player: str = "Player1", expected_id: str | None = None,
                       write: bool = False) -> str:
    """The id player `player` is bound to, after checking (and with `write`, fixing) that it is our pad."""
    howto = ("open Ryujinx once with the virtual pad present (python main.py world --backend ryujinx), choose "
             f"Options > Settings > Input, set {player} to the 'PokeGym Virtual Pad' (Xbox 360 Controller) as a Pro "
             "Controller, and save; see docs/ryujinx.md")
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise GameStartError(f"Ryujinx's config {path} does not exist: {howto}") from None
    except (OSError, ValueError) as exc:
        raise GameStartError(f"cannot read Ryujinx's config {path}: {exc}") from None
    entry = _player_entry(cast("dict[str, Any]", config), player) if isinstance(config, dict) else None
    if entry is None or entry.get("backend") != "GamepadSDL2":
        raise GameStartError(f"{path}: {player} is not bound to a gamepad: {howto}")
    current = str(entry.get("id", ""))
    if expected_id is not None and current != expected_id:
        if not write:
            raise GameStartError(f"{path}: {player} is bound to {current!r}, but the virtual pad is {expected_id!r}. "
                                 "Set `write: true` in the backend's input_config to fix the id (the mapping is "
                                 f"kept; a backup is made), or {howto}")
        backup = path.with_name(f"{path.name}.pokegym-{time.strftime('%Y%m%d-%H%M%S')}.bak")
        shutil.copy2(path, backup)
        entry["id"] = expected_id
        path.write_text(json.dumps(config, indent=2), encoding="utf-8")
        return expected_id
    if not names_our_pad(current):
        raise GameStartError(f"{path}: {player} is bound to {current!r}, which is not the virtual pad "
                             f"({XBOX360_VENDOR:04x}:{XBOX360_PRODUCT:04x}): {howto}")
    return current
