"""Measure our own peak memory while value-scanning a (big) process: the proof that scans are bounded.

    python -m core.memory.rss_probe --pid PID [--ram-budget BYTES] [--chunk BYTES]

Runs, in this fresh process, an unknown-initial-value f32 snapshot of every writable region and
then an "unchanged" and a "changed" next scan, and prints one JSON line: bytes scanned, seconds,
candidates left, and VmHWM (peak resident set) before and after. Used by the memory-bound test
and by `python main.py bench memory`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from core.memory.chunks import DEFAULT_CHUNK
from core.memory.readers import open_reader
from core.memory.scanner import RegionFilter
from core.memory.spill import DEFAULT_RAM_BUDGET
from core.memory.values import Condition, value_type
from core.memory.valuescan import ValueScan


def peak_rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return -1


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.memory.rss_probe", description=__doc__)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--ram-budget", type=int, default=DEFAULT_RAM_BUDGET)
    parser.add_argument("--chunk", type=int, default=DEFAULT_CHUNK)
    parser.add_argument("--workspace", type=Path)
    args = parser.parse_args(argv)
    before = peak_rss_bytes()
    reader = open_reader(args.pid)
    scan = ValueScan(reader, value_type("f32"), region_filter=RegionFilter(perms="rw"), chunk_size=args.chunk,
                     ram_budget=args.ram_budget, workspace=args.workspace)
    try:
        started = time.perf_counter()
        snapshot = scan.first_scan(Condition("unknown"))
        first_s = time.perf_counter() - started
        started = time.perf_counter()
        unchanged = scan.next_scan(Condition("unchanged"))
        unchanged_s = time.perf_counter() - started
        started = time.perf_counter()
        changed = scan.next_scan(Condition("changed"))
        changed_s = time.perf_counter() - started
        scanned = sum(chunk.span for chunk in scan.chunks)
    finally:
        scan.close()
        reader.close()
    print(json.dumps({"bytes_scanned": scanned, "snapshot_candidates": snapshot, "unchanged": unchanged,
                      "changed": changed, "snapshot_s": first_s, "unchanged_s": unchanged_s, "changed_s": changed_s,
                      "peak_rss_before": before, "peak_rss": peak_rss_bytes()}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
