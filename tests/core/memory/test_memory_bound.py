"""Scanning a big process costs disk, not our memory: a 1 GiB target is snapshotted and compared
by a fresh process whose own peak resident memory is measured (VmHWM)."""

from __future__ import annotations

import json
import subprocess
import sys

from core.paths import PROJECT_ROOT
from tests.foreign import ForeignGame

MIB = 1 << 20


def test_a_snapshot_scan_of_1_gib_stays_within_a_few_hundred_mib_of_our_memory(foreign_binary, tmp_path):
    with ForeignGame(foreign_binary, "--alloc-mib", "1024") as game:
        probe = subprocess.run([sys.executable, "-m", "core.memory.rss_probe", "--pid", str(game.pid),
                                "--ram-budget", str(64 * MIB), "--workspace", str(tmp_path)],
                               cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=600, check=True)
    report = json.loads(probe.stdout)
    assert report["bytes_scanned"] >= 1024 * MIB
    assert report["snapshot_candidates"] == report["unchanged"] >= 256 * MIB  # every aligned f32 of the block
    assert report["changed"] < 1000  # the game stood still: only its timers and the random walk
    # Python, numpy and the workers' chunk buffers, plus the 64 MiB allowed in memory: not the gigabyte.
    assert report["peak_rss"] < 320 * MIB, f"peak RSS {report['peak_rss'] / MIB:.0f} MiB"
    assert not list(tmp_path.iterdir())  # the spill files are gone once the scan is closed
