"""A target process for scanner tests and `bench scan`: memory with patterns planted in it.

    python -m core.memory.bench_target --mode anon --size 67108864 --seed 1
    python -m core.memory.bench_target --mode shm --size 268435456 --seed 1

Prints one JSON line ({"pid", "planted": [addresses], ...}) and keeps the memory alive until
its stdin closes. Signatures are assembled at run time so no literal copy sits in the process.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import mmap
import os
import random
import struct
import sys
import zlib

PAGE = 4096


def signature() -> bytes:
    return bytes(b ^ 0x4A for b in (0x1A, 0x01, 0x0D, 0x13, 0x07, 0x10, 0xEF, 0x4B))


def block(x: float, y: float, tick: int, valid: bool = True, changed: int = 0) -> bytes:
    """A 64-byte block in the built-in world's layout (docs/state-block.md); `changed`: that many bytes of
    its signature altered (a block a tolerant signature should still find), checksum still valid."""
    mark = bytearray(signature())
    for index in range(changed):
        mark[1 + 2 * index] ^= 0x5A
    body = bytes(mark) + struct.pack("<HHIQffffffQHBB", 2, 64, 1, tick, x, y, 0.0, 0.0, 0.0, -12.0, 5, 0, 0, 0)
    checksum = zlib.crc32(body)
    return body + struct.pack("<I", checksum if valid else checksum ^ 0xFFFF)


def fill(view: memoryview, rng: random.Random) -> None:
    """Realistic-looking memory: mostly zero pages, some random, some small integers and text."""
    for offset in range(0, len(view), 1 << 20):
        kind = rng.random()
        size = min(1 << 20, len(view) - offset)
        if kind < 0.45:
            continue  # zero page run
        if kind < 0.75:
            view[offset:offset + size] = rng.randbytes(size)
        else:
            words = struct.pack("<256I", *(rng.randrange(1 << 16) for _ in range(256)))
            view[offset:offset + size] = (words * (size // len(words) + 1))[:size]


def _plant_altered(view: memoryview, base: int, rng: random.Random) -> dict[str, list[int]]:
    """Blocks with one changed signature byte (one across a page boundary, two at random places) and one
    with two, for tolerant scans; their addresses as {"one": [...], "two": [...]}."""
    one = [PAGE * 5 - 4, *(rng.randrange(PAGE * 8, len(view) - 64) for _ in range(2))]
    two = [PAGE * 6 - 1]
    for offset in one:
        view[offset:offset + 64] = block(1.0, 1.0, 7, changed=1)
    for offset in two:
        view[offset:offset + 64] = block(2.0, 2.0, 8, changed=2)
    return {"one": [base + o for o in one], "two": [base + o for o in two]}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["anon", "shm"], default="anon")
    parser.add_argument("--size", type=int, default=64 << 20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=5)
    parser.add_argument("--fill", action="store_true", help="fill with realistic data (anon mode)")
    parser.add_argument("--altered", action="store_true",
                        help="only blocks with 1 or 2 signature bytes changed (anon mode; for tolerant scans)")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    report: dict[str, object] = {"pid": os.getpid()}
    if args.mode == "anon":
        memory = mmap.mmap(-1, args.size)
        view = memoryview(memory)
        if args.fill:
            fill(view, rng)
        base = ctypes.addressof(ctypes.c_char.from_buffer(memory))
        if args.altered:
            report.update(_plant_altered(view, base, rng), base=base, size=args.size)
        else:
            planted: list[int] = []
            decoys: list[int] = []
            # Straddle page boundaries (chunk boundaries for a page-sized chunk scan), then random places.
            offsets = [PAGE * 3 - 3, PAGE * 7 - 5] + [rng.randrange(0, args.size - 64) for _ in range(args.count)]
            for i, offset in enumerate(offsets):
                view[offset:offset + 64] = block(float(i), -float(i), 100 + i)
                planted.append(base + offset)
            for _ in range(3):
                offset = rng.randrange(0, args.size - 64)
                view[offset:offset + 64] = block(9.0, 9.0, 1, valid=False)
                decoys.append(base + offset)
            report.update(planted=planted, decoys=decoys, base=base, size=args.size)
    else:
        path = f"/dev/shm/pokegym-test-{os.getpid()}"
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        os.unlink(path)  # like Ryujinx: an unlinked file that only the mapping keeps alive
        os.ftruncate(fd, args.size)
        memory = mmap.mmap(fd, args.size)
        view = memoryview(memory)
        base = ctypes.addressof(ctypes.c_char.from_buffer(memory))
        offsets = sorted(rng.randrange(0, args.size // PAGE) * PAGE + 100 for _ in range(args.count))
        for offset in offsets:
            view[offset:offset + 64] = block(1.0, 2.0, 3)
        report.update(planted=[base + o for o in offsets], fd=fd, base=base, size=args.size,
                      blocks=os.fstat(fd).st_blocks)
    print(json.dumps(report), flush=True)
    sys.stdin.read()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
