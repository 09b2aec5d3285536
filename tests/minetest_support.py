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
from typing import Any

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


# While the player walks: each logged point within MOVING_NODES of where the evaluator saw the player between
# TRAIL_S before and LEAD_S after the log was read.
MOVING_NODES = 0.25
TRAIL_S = 1.0  # the log trails the client (the server writes it every 0.1 s), more on a loaded machine
LEAD_S = 0.3


def assert_follows_the_log(log: list[tuple[float, tuple[float, float, float, float]]], samples: list[Any]) -> None:
    """Evaluator samples (`.time`, `.x`, `.y`) follow the ground-truth log taken while the player walked, and
    the comparison covered the walks (enough points, enough of them moving)."""
    compared = moving = 0
    for moment, (x, y, _, _) in log:
        recent = [s for s in samples if moment - TRAIL_S <= s.time <= moment + LEAD_S]
        if len(recent) < 10:
            continue  # the evaluator was not sampling then (a gap while the test compared at rest)
        closest = min(math.hypot(s.x - x, s.y - y) for s in recent)
        assert closest <= MOVING_NODES, (moment, (x, y), closest)
        compared += 1
        moving += math.hypot(recent[0].x - recent[-1].x, recent[0].y - recent[-1].y) > 0.5
    assert compared > 40 and moving > 10, (compared, moving, len(log), len(samples))
