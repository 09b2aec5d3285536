"""Build (and check) the Minetest memory signature in assets/profiles/minetest.yaml, from several fresh processes.

    python tools/minetest_signature.py --processes 3 --check 2

How, following FACTS ("Where the position lives", "Signatures"): the player's position is three float32
values, x y z in nodes x 10, held in about 14 copies. The copy inside the client's Player object sits 76
bytes before the string "gui_hotbar.png" (minetest_game's hotbar image, kept inline in a std::string), with
the speed vector after it, then pitch and yaw (degrees). For each process this script finds that copy
from the test-only ground-truth mod's position (tests/data/minetest_truth), dumps the 128 bytes around
it at several moments (standing, walking, turned, jumping), and keeps as literal only the bytes that
were identical in every dump of every process and are not values (position, speed, angles) or
pointers (any qword that ever looked like a user-space address). The pattern is then checked in
`--check` more fresh processes: exactly one match, decoding to the ground truth, before and after moving.

This is a development tool for this one game build; the memory finder (issue 13) generalises it.
"""

from __future__ import annotations

import argparse
import math
import struct
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.backends.profile import load_backend
from core.game.external.game import ExternalGame
from core.game.external.spec import FileCopy
from core.game.pad import Button, PadState
from core.memory.pattern import parse_pattern
from core.memory.readers import open_reader
from core.memory.scanner import RegionFilter, scan

BLOCK = 128
POSITION_AT = 32          # the position's offset inside the block
VALUES = range(POSITION_AT, POSITION_AT + 32)   # position, speed, pitch, yaw
MARKER = b"gui_hotbar.png"
TRUTH_MOD = Path(__file__).resolve().parent.parent / "tests" / "data" / "minetest_truth"


def truth(game: ExternalGame) -> list[float]:
    return [float(v) for v in (game.runtime_dir / "world" / "pokegym_truth.txt").read_text().split()]


def hex_f32(value: float) -> str:
    return " ".join(f"{b:02X}" for b in struct.pack("<f", value))


def player_copy(game: ExternalGame) -> tuple[object, int]:
    reader = open_reader(game.pid)
    x, _, z = truth(game)[:3]
    pattern = parse_pattern(f"{hex_f32(x * 10)} ?? ?? ?? ?? {hex_f32(z * 10)}")
    for match in scan(reader, pattern, RegionFilter(perms="rw")):
        if reader.read(match.address, 100).find(MARKER) == 76:
            return reader, match.address - POSITION_AT
    raise SystemExit("the Player copy of the position (76 bytes before gui_hotbar.png) was not found")


MOVES = [(PadState(left_y=1.0), 1.5), (PadState(right_x=0.6, right_y=0.2), 0.4), (PadState(left_x=1.0), 0.8),
         (PadState(buttons=frozenset({Button.A})), 0.6), (PadState(left_y=-1.0, buttons=frozenset({Button.A})), 1.0),
         (PadState(right_x=-1.0, right_y=-0.3), 0.5), (PadState(left_y=1.0, left_x=-1.0), 1.5)]


def dumps_of(game: ExternalGame) -> list[bytes]:
    """Dumps taken every 50 ms while the player walks, strafes, jumps, falls and turns, and at rest: a byte
    that is ever different (mid-jump, mid-fall, on another node) must not be a literal."""
    reader, block = player_copy(game)
    found = [reader.read(block, BLOCK)]
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.05):
            found.append(reader.read(block, BLOCK))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        for pad, seconds in MOVES:
            game.hold(pad, seconds)
            time.sleep(0.4)
    finally:
        stop.set()
        sampler.join()
    return found


def build(dumps: list[bytes]) -> str:
    """Literal where every dump agrees; then narrow() keeps only the understood structure."""
    fixed = [all(d[i] == dumps[0][i] for d in dumps) for i in range(BLOCK)]
    for i in VALUES:
        fixed[i] = False
    for start in range(0, BLOCK - 7, 4):  # the block is only 4-byte aligned: try every 4-byte start
        for dump in dumps:
            (value,) = struct.unpack_from("<Q", dump, start)
            if 0x10000 <= value < 0x800000000000 and value >> 40 in range(0x55, 0x80):  # heap or mmap address
                fixed[start:start + 8] = [False] * 8
    return " ".join(f"{dumps[0][i]:02X}" if fixed[i] else "??" for i in range(BLOCK))


# Offsets kept literal in the shipped pattern: the fields before the physics overrides, the three override
# floats and their bools (0..30), and the hotbar image std::string's length and text (100..122). Bytes outside
# them agreed across the 5 build processes but differed in about one later launch in four: state, not structure.
STRUCTURE = [*range(0, 31), *range(100, 123)]


def narrow(pattern_text: str) -> str:
    return " ".join(b if i in STRUCTURE else "??" for i, b in enumerate(pattern_text.split()))


def merge(first: str, second: str) -> str:
    """Literal only where both patterns have the same literal byte."""
    return " ".join(a if a == b else "??" for a, b in zip(first.split(), second.split(), strict=True))


def check(game: ExternalGame, pattern_text: str) -> None:
    """One match, equal to the ground truth; and the pattern keeps matching there all through moves."""
    pattern = parse_pattern(pattern_text)
    reader = open_reader(game.pid)
    matches = list(scan(reader, pattern, RegionFilter(perms="rw")))
    x, y, z = truth(game)[:3]
    decoded = [struct.unpack("<fff", reader.read(m.address + POSITION_AT, 12)) for m in matches]
    ok = len(matches) == 1 and all(math.isclose(a / 10, b, abs_tol=0.05) for a, b in zip(decoded[0], (x, y, z)))
    print(f"  check pid {game.pid}: {len(matches)} match(es), decoded {decoded}, truth {(x, y, z)}: "
          f"{'OK' if ok else 'FAILED'}")
    if not ok:
        raise SystemExit(1)
    address, misses, reads = matches[0].address, 0, 0
    stop = threading.Event()

    def follow() -> None:
        nonlocal misses, reads
        while not stop.wait(0.02):
            reads += 1
            misses += not pattern.matches_at(reader.read(address, BLOCK), 0)

    follower = threading.Thread(target=follow, daemon=True)
    follower.start()
    for pad, seconds in MOVES:
        game.hold(pad, seconds)
    stop.set()
    follower.join()
    print(f"  while moving: {reads - misses} of {reads} reads still matched")
    if misses:
        raise SystemExit(1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--check", type=int, default=2)
    parser.add_argument("--pattern", help="only check this pattern")
    parser.add_argument("--merge", help="a pattern from an earlier run: keep only literals both agree on")
    args = parser.parse_args()
    backend = load_backend("minetest")
    mod = FileCopy(**{"from": str(TRUTH_MOD), "to": "{runtime}/world/worldmods/pokegym_truth"})
    with ExternalGame.launch(backend.external, backend.name, backend.directory, extra_files=[mod]) as game:
        pattern = args.pattern
        if pattern is None:
            dumps: list[bytes] = []
            for index in range(args.processes):
                if index:
                    game.restart("spawn")
                dumps += dumps_of(game)
                print(f"process {index + 1} (pid {game.pid}): {len(dumps)} dumps so far")
            pattern = build(dumps)
            if args.merge:
                pattern = merge(pattern, args.merge)
            pattern = narrow(pattern)
            literal = sum(1 for b in pattern.split() if b != "??")
            print(f"signature ({literal} of {BLOCK} bytes literal; position at +{POSITION_AT}):\n{pattern}")
        for _ in range(args.check):
            game.restart("spawn")
            check(game, pattern)
    return 0


if __name__ == "__main__":
    sys.exit(main())
