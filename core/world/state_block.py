"""The world's ground-truth block: one binary record in the world's own heap, updated every tick.

This is how the built-in world behaves like a commercial game: its state lives in
process memory and nowhere else. The evaluator finds the block by scanning for the
signature and decodes it with assets/profiles/builtin_world.yaml (docs/state-block.md).

The signature is assembled byte by byte at run time, so the process holds no second
copy of the pattern (a bytes literal would leave one in the code object).

Layout version 2, 64 bytes, little-endian:
    0  u8[8] signature        8 u16 layout version   10 u16 block size   12 u32 map id
    16 u64 tick               24 f32 x   28 f32 y   32 f32 z   36 f32 facing (deg)
    40 f32 camera yaw (deg)   44 f32 camera pitch (deg)      48 u64 quest flags
    56 u16 dialogue id (0 = none, else speaker index + 1)    58 u8 dialogue line
    59 u8 dialogue active     60 u32 CRC-32 of bytes 0..59
"""

from __future__ import annotations

import ctypes
import struct
import zlib

from core.world.simulation import GameState

LAYOUT_VERSION = 2
BLOCK_SIZE = 64
_BODY = struct.Struct("<HHIQffffffQHBB")
_CHECKSUM_OFFSET = 60
# XOR-scrambled so that no literal in this module equals the signature bytes.
_SCRAMBLED = (0x1A, 0x01, 0x0D, 0x13, 0x07, 0x10, 0xEF, 0x4B)
_KEY = 0x4A


class StateBlock:
    def __init__(self, map_id: int) -> None:
        self._buffer = ctypes.create_string_buffer(BLOCK_SIZE)
        self._view = memoryview(self._buffer).cast("B")
        self._map_id = map_id
        for index, scrambled in enumerate(_SCRAMBLED):
            self._view[index] = scrambled ^ _KEY

    def wipe(self) -> None:
        """Zero the block, as a game's allocator would on freeing its state."""
        ctypes.memset(self._buffer, 0, BLOCK_SIZE)

    @property
    def address(self) -> int:
        """Where the block sits in this process (for diagnostics only; never sent to clients)."""
        return ctypes.addressof(self._buffer)

    def update(self, state: GameState) -> None:
        dialogue_id = state.dialogue_target + 1 if state.dialogue_target >= 0 else 0
        _BODY.pack_into(
            self._view, 8,
            LAYOUT_VERSION, BLOCK_SIZE, self._map_id, state.tick,
            state.x, state.y, state.z, state.facing, state.cam_yaw, state.cam_pitch,
            state.flags, dialogue_id, min(state.dialogue_line, 255), 1 if dialogue_id else 0,
        )
        checksum = zlib.crc32(self._view[:_CHECKSUM_OFFSET])
        struct.pack_into("<I", self._view, _CHECKSUM_OFFSET, checksum)
