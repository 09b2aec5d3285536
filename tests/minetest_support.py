"""Shared pieces for the tests that drive real Minetest: is it installed, and the TEST-ONLY ground truth.

The ground truth is a world mod (tests/data/minetest_truth) that writes the server's view of the player
to <world>/pokegym_truth.txt every 0.1 s. Only tests read it: never an agent, the evaluator or the
memory finder.
"""

from __future__ import annotations

import math
import os
import shutil
import time
from pathlib import Path

from core.game.external.launcher import find_executable
from core.game.external.spec import FileCopy

TRUTH_MOD = Path(__file__).resolve().parent / "data" / "minetest_truth"


def minetest_missing() -> bool:
    try:
        find_executable("minetest", ["/usr/games"])
    except Exception:  # noqa: BLE001 - any reason it cannot be found
        return True
    return shutil.which("Xvfb") is None


def require_minetest_in_ci() -> None:
    if minetest_missing() and os.environ.get("POKEGYM_REQUIRE_MINETEST"):
        raise RuntimeError("POKEGYM_REQUIRE_MINETEST is set but minetest or Xvfb is missing (.ci/run installs them)")


def truth_mod() -> FileCopy:
    """The ground-truth mod, copied into the world before every launch."""
    return FileCopy(**{"from": str(TRUTH_MOD), "to": "{runtime}/world/worldmods/pokegym_truth"})


def read_truth(runtime_dir: Path | str) -> tuple[float, float, float, float]:
    """(x, y, z, yaw in degrees) as a sample: Minetest's ground plane (x, z) is the sample's (x, y), its
    height y the sample's z."""
    path = Path(runtime_dir) / "world" / "pokegym_truth.txt"
    x, y, z, yaw, _pitch, _clock = (float(v) for v in path.read_text().split())
    return x, z, y, math.degrees(yaw)


def settled_truth(runtime_dir: Path | str, timeout: float = 8.0) -> tuple[float, float, float, float]:
    """The log once it has stopped changing for 0.3 s (the server trails the client by a few frames)."""
    last, deadline = read_truth(runtime_dir), time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(0.3)
        current = read_truth(runtime_dir)
        if current == last:
            break
        last = current
    return last


def as_sample(values: tuple[float, ...] | list[float]) -> tuple[float, float, float]:
    """A y-up triple in Minetest's units (nodes x 10) as a sample in nodes: ground plane (x, y), z up."""
    x, height, z = values
    return x / 10, z / 10, height / 10
