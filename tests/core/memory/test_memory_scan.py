"""Scanning live helper processes: every planted match, chunk boundaries, decoys, shared memory, errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from core.evaluation.locate import candidates
from core.memory.pattern import parse_pattern
from core.memory.readers import LinuxReader
from core.memory.regions import Region, read_maps
from core.memory.scanner import RegionFilter, ScanStats, scan
from core.memory.windows import MEM_COMMIT, PageInfo, WindowsReader
from core.paths import PROJECT_ROOT

SIGNATURE = "50 4B 47 59 4D 5A A5 01"


@contextmanager
def planted(*args: str) -> Iterator[dict]:
    helper = subprocess.Popen([sys.executable, "-m", "core.memory.bench_target", *args], cwd=PROJECT_ROOT,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    with helper:  # closes its pipes too, or each test leaks two file objects (a ResourceWarning)
        try:
            yield json.loads(helper.stdout.readline())
        finally:
            helper.stdin.close()
            helper.wait(timeout=30)


def test_every_planted_match_is_found_including_across_chunk_boundaries():
    with planted("--mode", "anon", "--size", str(8 << 20), "--count", "6") as info:
        reader = LinuxReader(info["pid"])
        region = RegionFilter(perms="rw", min_size=info["size"], max_size=info["size"])
        expected = sorted(info["planted"] + info["decoys"])
        for chunk in (4096, 1 << 20, 64 << 20):  # page-sized chunks put two matches across boundaries
            found = sorted(m.address for m in scan(reader, parse_pattern(SIGNATURE), region, chunk_size=chunk))
            assert found == expected, f"chunk size {chunk}"


def test_wildcards_find_the_same_blocks():
    with planted("--mode", "anon", "--size", str(4 << 20), "--count", "3") as info:
        reader = LinuxReader(info["pid"])
        region = RegionFilter(perms="rw", min_size=info["size"], max_size=info["size"])
        found = scan(reader, parse_pattern("?? 4B 4? 59 ?D 5A A5 01"), region)
        assert sorted(m.address for m in found) == sorted(info["planted"] + info["decoys"])


def test_decoys_that_fail_validation_are_rejected(builtin_profile):
    with planted("--mode", "anon", "--size", str(4 << 20), "--count", "2") as info:
        reader = LinuxReader(info["pid"])
        valid = candidates(reader, builtin_profile)
        assert sorted(b.address for b in valid) == sorted(info["planted"])
        assert all(b.values["layout_version"] == 2 for b in valid)


def test_region_filters_select_by_permission_path_and_size():
    with planted("--mode", "anon", "--size", str(4 << 20), "--count", "1") as info:
        reader = LinuxReader(info["pid"])
        pattern = parse_pattern(SIGNATURE)
        assert scan(reader, pattern, RegionFilter(perms="rwx")) == []
        assert scan(reader, pattern, RegionFilter(perms="rw", path_contains="libc")) == []
        assert scan(reader, pattern, RegionFilter(perms="rw", max_size=1 << 20)) == []
        assert len(scan(reader, pattern, RegionFilter(perms="rw", min_size=4 << 20, max_size=4 << 20))) == 6


def test_shared_memory_is_read_through_the_file_without_allocating_pages():
    size = 256 << 20
    with planted("--mode", "shm", "--size", str(size), "--count", "4") as info:
        reader = LinuxReader(info["pid"])
        stats = ScanStats()
        found = scan(reader, parse_pattern(SIGNATURE), RegionFilter(path_contains="/dev/shm"), stats=stats)
        assert sorted(m.address for m in found) == info["planted"]
        assert stats.bytes_read <= 4 * 2 * 4096 + 64  # only the pages that hold data were read
        backing = os.stat(f"/proc/{info['pid']}/fd/{info['fd']}")
        assert backing.st_blocks == info["blocks"]  # the scan allocated nothing
        reader.close()


def test_the_slow_path_without_file_access_still_finds_shared_memory_matches():
    with planted("--mode", "shm", "--size", str(16 << 20), "--count", "2") as info:
        reader = LinuxReader(info["pid"], shm_through_files=False, prefer_proc_mem=True)
        found = scan(reader, parse_pattern(SIGNATURE), RegionFilter(path_contains="/dev/shm"))
        assert sorted(m.address for m in found) == info["planted"]


def _as_nobody(action) -> str:
    """Run `action` in a forked child that has dropped to user nobody; return what it reports."""
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        os.close(read_end)
        try:
            os.setgid(65534)
            os.setuid(65534)
            message = action()
        except BaseException as exc:  # noqa: BLE001 - reported to the parent through the pipe
            message = f"{type(exc).__name__}: {exc}"
        os.write(write_end, message.encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        report = pipe.read()
    os.waitpid(child, 0)
    return report


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to drop to another user")
def test_a_permission_failure_explains_the_fix():
    with planted("--mode", "anon", "--size", str(1 << 20), "--count", "1") as info:
        pid, address = info["pid"], info["planted"][0]
        listing = _as_nobody(lambda: str(read_maps(pid)))
        reading = _as_nobody(lambda: repr(LinuxReader(pid).read(address, 8)))
    for report in (listing, reading):
        assert report.startswith("MemoryAccessError: not allowed to"), report
        assert f"process {pid}" in report and "same user" in report and "cap_sys_ptrace" in report


def test_a_vanished_process_is_reported():
    result = subprocess.run([sys.executable, "main.py", "scan", "--pid", "999999999", "--pattern", SIGNATURE],
                            cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "no process with pid 999999999" in result.stderr


def test_scan_json_output_reports_matches_and_throughput():
    with planted("--mode", "anon", "--size", str(2 << 20), "--count", "1") as info:
        result = subprocess.run(
            [sys.executable, "main.py", "scan", "--pid", str(info["pid"]), "--pattern", SIGNATURE, "--perms", "rw",
             "--min-size", str(2 << 20), "--max-size", str(2 << 20), "--dump", "8", "--json"],
            cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=60)
    report = json.loads(result.stdout)
    assert sorted(m["address"] for m in report["matches"]) == sorted(info["planted"] + info["decoys"])
    first = report["matches"][0]
    assert bytes.fromhex(first["dump_hex"])[first["address"] - first["dump_start"]:][:5] == b"PKGYM"
    assert report["bytes_read"] == 2 << 20 and report["gib_per_s"] > 0


class FakeWindows:
    """Two committed regions and a guard page, as VirtualQueryEx would describe them."""

    def __init__(self) -> None:
        self.memory = {0x10000: bytearray(b"\x00" * 0x2000), 0x40000: bytearray(b"\x11" * 0x1000)}
        self.memory[0x10000][0x1FFC:0x2000] = bytes.fromhex("504B4759")
        self.opened_with: int | None = None
        self.closed = False

    def open_process(self, pid: int, access: int) -> str:
        self.opened_with = access
        return "handle"

    def query(self, handle: str, address: int) -> PageInfo | None:
        layout = [PageInfo(0, 0x10000, 0x10000, 0x01, 0), PageInfo(0x10000, 0x2000, MEM_COMMIT, 0x04, 0x20000),
                  PageInfo(0x12000, 0x2E000, 0x2000, 0x01, 0), PageInfo(0x40000, 0x1000, MEM_COMMIT, 0x104, 0x20000),
                  PageInfo(0x41000, 0x1000, MEM_COMMIT, 0x20, 0x1000000)]
        return next((p for p in layout if p.base <= address < p.base + p.size), None)

    def read(self, handle: str, address: int, size: int) -> bytes:
        for base, data in self.memory.items():
            if base <= address < base + len(data):
                return bytes(data[address - base:address - base + size])
        raise OSError("ReadProcessMemory failed")

    def close(self, handle: str) -> None:
        self.closed = True


def test_the_windows_reader_opens_read_only_and_walks_committed_regions():
    api = FakeWindows()
    reader = WindowsReader(4242, api=api)
    assert api.opened_with == 0x0010 | 0x0400  # PROCESS_VM_READ | PROCESS_QUERY_INFORMATION, nothing else
    regions = reader.regions()
    assert [(r.start, r.end, r.perms) for r in regions] == [(0x10000, 0x12000, "rw-p"), (0x41000, 0x42000, "r-xp")]
    assert reader.read(0x10000 + 0x1FFC, 4) == b"PKGY"
    assert reader.read(0x41000, 16) == b""  # unreadable pages read as nothing, no exception
    found = scan(reader, parse_pattern("50 4B 47 59"), RegionFilter(), chunk_size=0x1000)
    assert [m.address for m in found] == [0x10000 + 0x1FFC]
    reader.close()
    assert api.closed


def test_region_describes_itself():
    region = Region(0x1000, 0x3000, "rw-p", 0, "")
    assert region.size == 0x2000 and str(region) == "0x1000-0x3000 rw-p [anonymous]"


def test_the_tracker_locks_onto_the_newest_of_several_valid_copies(builtin_profile):
    """Games leave valid-looking copies of their state behind; the live block has the newest tick."""
    from core.evaluation.tracker import BlockTracker

    with planted("--mode", "anon", "--size", str(4 << 20), "--count", "4") as info:
        tracker = BlockTracker(LinuxReader(info["pid"]), builtin_profile)
        assert tracker.scan()
        assert tracker.status.candidates == len(info["planted"])
        assert tracker.status.address == info["planted"][-1]  # planted last, with the highest tick
        assert tracker.sample().tick == 100 + len(info["planted"]) - 1


def test_the_tracker_refuses_to_choose_between_blocks_at_different_places_when_nothing_tells_them_apart(
        builtin_profile):
    """A signature that matches two objects in some launch (another object near the player) must not judge a task
    on whichever lies first in memory: without a tick, blocks at different positions leave the tracker unlocked,
    saying why and what to do; copies at one position still lock."""
    from core.evaluation.tracker import BlockTracker

    no_tick = builtin_profile.model_copy(
        update={"fields": {name: spec for name, spec in builtin_profile.fields.items() if name != "tick"}})
    with planted("--mode", "anon", "--size", str(4 << 20), "--count", "2") as info:
        tracker = BlockTracker(LinuxReader(info["pid"]), no_tick)
        assert not tracker.scan()
        assert tracker.status.state == "ambiguous" and tracker.status.address is None
        assert tracker.sample() is None
        message = tracker.status.message
        assert f"{len(info['planted'])} places match the signature and hold different positions" in message
        assert "memory signature --processes 3" in message
    with planted("--mode", "shm", "--size", str(4 << 20), "--count", "3") as info:  # three copies at (1, 2)
        tracker = BlockTracker(LinuxReader(info["pid"]), no_tick)
        assert tracker.scan() and tracker.status.state == "locked"
        assert tracker.status.address in info["planted"]
