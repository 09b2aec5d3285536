"""`python main.py scan`: find an AOB pattern in a live process's memory (read-only).

    python main.py scan --pid 1234 --pattern "50 4B 47 59 4D ?? A5 01" --dump 32
    python main.py scan --pid 1234 --pattern "..." --perms rw --path-contains /dev/shm --json
"""

from __future__ import annotations

import argparse
import json
import sys

from core.memory.pattern import PatternError, parse_pattern
from core.memory.readers import open_reader
from core.memory.regions import MemoryAccessError
from core.memory.scanner import RegionFilter, ScanStats, scan


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pid", type=int, required=True, help="process to scan")
    parser.add_argument("--pattern", required=True, help="hex bytes, ?? for any byte, 4? or ?A for nibbles")
    parser.add_argument("--perms", default="r", help="permission letters every region must have (default r)")
    parser.add_argument("--path-contains", help="only regions whose mapping path contains this text")
    parser.add_argument("--min-size", type=int, default=0, help="skip regions smaller than this many bytes")
    parser.add_argument("--max-size", type=int, help="skip regions larger than this many bytes")
    parser.add_argument("--dump", type=int, default=0, metavar="N", help="show N bytes either side of each match")
    parser.add_argument("--limit", type=int, default=100, help="print at most this many matches (default 100)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def hexdump(data: bytes, base: int, mark: int, width: int) -> list[str]:
    lines: list[str] = []
    for offset in range(0, len(data), 16):
        row = data[offset:offset + 16]
        cells = " ".join(f"[{b:02X}]" if base + offset + i >= mark and base + offset + i < mark + width else f"{b:02X}"
                         for i, b in enumerate(row))
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in row)
        lines.append(f"  {base + offset:#014x}  {cells:<64}  {text}")
    return lines


def run(args: argparse.Namespace) -> int:
    try:
        pattern = parse_pattern(args.pattern)
    except PatternError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    region_filter = RegionFilter(perms=args.perms, path_contains=args.path_contains, min_size=args.min_size,
                                 max_size=args.max_size)
    stats = ScanStats()
    try:
        reader = open_reader(args.pid)
        matches = scan(reader, pattern, region_filter, stats=stats)
    except ProcessLookupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except MemoryAccessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 3
    dumps: list[tuple[int, bytes]] = []
    for match in matches[:args.limit]:
        if args.dump:
            start = max(match.region.start, match.address - args.dump)
            data = reader.read(start, min(match.region.end, match.address + len(pattern) + args.dump) - start)
            dumps.append((start, data))
        else:
            dumps.append((0, b""))
    reader.close()
    if args.json:
        print(json.dumps({
            "pid": args.pid, "pattern": pattern.text, "matches": [
                {"address": m.address, "address_hex": f"{m.address:#x}", "region": str(m.region),
                 "region_offset": m.address - m.region.start,
                 **({"dump_start": start, "dump_hex": data.hex()} if args.dump else {})}
                for m, (start, data) in zip(matches[:args.limit], dumps)
            ],
            "match_count": len(matches), "regions_scanned": stats.regions, "bytes_read": stats.bytes_read,
            "seconds": round(stats.seconds, 4), "gib_per_s": round(stats.gib_per_s, 3),
        }))
        return 0
    for match, (start, data) in zip(matches[:args.limit], dumps):
        print(f"{match.address:#014x}  +{match.address - match.region.start:#x} in {match.region}")
        if args.dump:
            print("\n".join(hexdump(data, start, match.address, len(pattern))))
    shown = f" (showing {args.limit})" if len(matches) > args.limit else ""
    print(f"{len(matches)} match(es){shown} in {stats.regions} regions; read {stats.bytes_read / 2**20:.1f} MiB "
          f"in {stats.seconds:.2f} s ({stats.gib_per_s:.2f} GiB/s)")
    return 0
