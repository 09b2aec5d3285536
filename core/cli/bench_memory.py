"""`python main.py bench memory`: AOB and value scans against a plain read of the same regions, same run.

The target holds 1 GiB (45% zero pages, 30% random bytes, 25% small integers, as bench scan's);
every figure is the best of three, interleaved with the plain reads it is compared with. The
bound check scans a separate, bigger target (4 GiB by default) from a fresh process and reports
that process's peak resident memory.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.paths import PROJECT_ROOT

Emit = Callable[..., None]


def _target(size: int) -> tuple[subprocess.Popen[str], dict[str, Any]]:
    process = subprocess.Popen([sys.executable, "-m", "core.memory.bench_target", "--mode", "anon", "--size",
                                str(size), "--fill", "--count", "16"], cwd=PROJECT_ROOT, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    return process, json.loads(process.stdout.readline())


def bench_memory(args: argparse.Namespace, emit: Emit) -> None:
    from core.memory.chunks import DEFAULT_CHUNK
    from core.memory.pattern import parse_pattern
    from core.memory.readers import LinuxReader
    from core.memory.scanner import RegionFilter, ScanStats, default_workers, scan
    from core.memory.values import Condition, value_type
    from core.memory.valuescan import ValueScan

    size = args.scan_mib << 20
    process, info = _target(size)
    try:
        reader = LinuxReader(info["pid"])
        only = RegionFilter(perms="rw", min_size=size, max_size=size)
        regions = [r for r in reader.regions() if only.accepts(r)]
        buffer = bytearray(DEFAULT_CHUNK)

        def plain_read() -> float:
            started = time.perf_counter()
            for region in regions:
                for address in range(region.start, region.end, DEFAULT_CHUNK):
                    reader.read_into(address, memoryview(buffer)[:min(DEFAULT_CHUNK, region.end - address)])
            return time.perf_counter() - started

        literal, wildcard = parse_pattern("50 4B 47 59 4D 5A A5 01"), parse_pattern("?? ?? 47 59 4D 5A A5 01")
        reads: list[float] = []
        aob: list[float] = []
        aob_wild: list[float] = []
        aob_tolerant: list[float] = []
        snapshot: list[float] = []
        compare: list[float] = []
        with tempfile.TemporaryDirectory(dir=args.tmp) as folder:
            for _ in range(3):
                reads.append(plain_read())
                stats = ScanStats()
                found = scan(reader, literal, regions=regions, stats=stats)
                assert len(found) == 2 + 16 + 3, f"the scan found {len(found)} of the 21 planted signatures"
                aob.append(stats.seconds)
                stats = ScanStats()
                scan(reader, wildcard, regions=regions, stats=stats)
                aob_wild.append(stats.seconds)
                # A found profile's fallback when no exact match validates: 8 literal bytes, 1 may differ.
                stats = ScanStats()
                tolerated = scan(reader, literal, regions=regions, stats=stats, tolerance=1)
                assert [m.address for m in tolerated] == [m.address for m in found], "a tolerant scan found others"
                aob_tolerant.append(stats.seconds)
                values = ValueScan(reader, value_type("f32"), region_filter=only, workspace=Path(folder))
                started = time.perf_counter()
                values.first_scan(Condition("unknown"))
                snapshot.append(time.perf_counter() - started)
                started = time.perf_counter()
                kept = values.next_scan(Condition("unchanged"))
                compare.append(time.perf_counter() - started)
                assert kept == size // 4, "the target holds still: every value is unchanged"
                values.close()
        reader.close()
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=60)
    read_s = min(reads)
    gib = size / (1 << 30)
    emit(args, "read_gib_per_s", gib / read_s, "GiB/s")
    emit(args, "aob_scan_gib_per_s", gib / min(aob), "GiB/s", gib / read_s, "read_gib_per_s")
    emit(args, "aob_scan_over_read_ratio", min(aob) / read_s, "ratio", read_s, "read_s", ratio=min(aob) / read_s)
    emit(args, "aob_leading_wildcards_over_read_ratio", min(aob_wild) / read_s, "ratio", read_s, "read_s",
         ratio=min(aob_wild) / read_s)
    emit(args, "aob_tolerant_scan_over_read_ratio", min(aob_tolerant) / read_s, "ratio", read_s, "read_s",
         ratio=min(aob_tolerant) / read_s)
    emit(args, "snapshot_over_read_ratio", min(snapshot) / read_s, "ratio", read_s, "read_s",
         ratio=min(snapshot) / read_s)
    emit(args, "snapshot_compare_over_read_ratio", min(compare) / read_s, "ratio", read_s, "read_s",
         ratio=min(compare) / read_s)
    emit(args, "scan_workers", default_workers(), "threads")
    if args.bound_gib > 0:
        _bound(args, emit)


def _bound(args: argparse.Namespace, emit: Emit) -> None:
    """A first (snapshot) scan and two next scans of a big target, from a fresh process."""
    size = args.bound_gib << 30
    process, info = _target(size)
    try:
        with tempfile.TemporaryDirectory(dir=args.tmp) as folder:
            output = subprocess.run([sys.executable, "-m", "core.memory.rss_probe", "--pid", str(info["pid"]),
                                     "--workspace", folder], cwd=PROJECT_ROOT, capture_output=True, text=True,
                                    check=True).stdout
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=120)
    probe = json.loads(output)
    emit(args, f"peak_rss_mib_value_scan_{args.bound_gib}gib", probe["peak_rss"] / 2**20, "MiB",
         probe["bytes_scanned"] / 2**20, "target_writable_mib")
