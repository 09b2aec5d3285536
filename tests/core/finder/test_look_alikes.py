"""The finder puts a copy of the position that lives in a struct of its own before copies in a ring of look-alike
structs, which no signature can tell apart (core/finder/look_alikes.py). Read from a real second process."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import pytest

from core.finder.look_alikes import look_alike_places, singular_copies_first
from core.finder.ranking import RankedTriple
from core.memory.readers import MemoryReader, open_reader
from core.memory.scanner import RegionFilter

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads another process's memory")

# A process holding the same position (x, y, z floats at offset 24 of a 64-byte struct) in a ring of four
# identical structs, in one struct of its own, and in one surrounded by zeros; another value elsewhere. The
# structs' bytes come from a seeded generator, so they appear nowhere else in that process (not in this text).
TARGET = """
import json, sys
import numpy as np
rng = np.random.default_rng(11)
position = np.array([-1918.25, 46.25, 1281.5], np.float32).view(np.uint8)
member = rng.integers(1, 256, 64, dtype=np.uint8)
member[24:36] = position
ring = np.tile(member, 4)
own = rng.integers(1, 256, 64, dtype=np.uint8)
own[24:36] = position
bare = np.zeros(64, np.uint8)
bare[24:36] = position
other = rng.integers(1, 256, 64, dtype=np.uint8)
other[24:36] = np.array([5.0, 6.0, 7.0], np.float32).view(np.uint8)
print(json.dumps({"ring": [ring.ctypes.data + 64 * k + 24 for k in range(4)], "own": own.ctypes.data + 24,
                  "bare": bare.ctypes.data + 24, "other": other.ctypes.data + 24}), flush=True)
sys.stdin.read()
"""
POSITION = (-1918.25, 46.25, 1281.5)
EVERYWHERE = RegionFilter(perms="rw")


@pytest.fixture(scope="module")
def target() -> Iterator[tuple[MemoryReader, dict[str, list[int] | int]]]:
    with subprocess.Popen([sys.executable, "-c", TARGET], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          text=True) as process:
        try:
            assert process.stdout is not None
            addresses = json.loads(process.stdout.readline())
            reader = open_reader(process.pid)
            try:
                yield reader, addresses
            finally:
                reader.close()
        finally:
            process.kill()


def _triple(address: int, score: float, values: tuple[float, float, float] = POSITION) -> RankedTriple:
    return RankedTriple(address, values, 1, score, 0.9, 40.0)


def test_a_copy_in_a_struct_of_its_own_goes_before_the_rings_members_it_ties_with(target):
    reader, at = target
    ring = [_triple(a, 0.86) for a in at["ring"]]
    other, own, bare = _triple(at["other"], 0.85, (5.0, 6.0, 7.0)), _triple(at["own"], 0.84), _triple(at["bare"], 0.84)
    ranked = singular_copies_first(reader, [*ring, other, own, bare], EVERYWHERE)
    # The best's equals take the same places, the struct of its own first, the one that cannot be told next;
    # the candidate with other values keeps its place.
    assert [c.address for c in ranked] == [own.address, bare.address, *(c.address for c in ring[:2]), other.address,
                                          *(c.address for c in ring[2:])]
    assert own.terms["look_alikes"] == 1.0 and bare.terms["look_alikes"] == 0.0
    assert all(c.terms["look_alikes"] >= 4 for c in ring)
    assert "look_alikes" not in other.terms


def test_the_order_stays_when_the_best_is_its_own_or_nothing_is(target):
    reader, at = target
    first = [_triple(at["own"], 0.86), *(_triple(a, 0.86) for a in at["ring"])]
    assert singular_copies_first(reader, first, EVERYWHERE) == first
    ring_only = [_triple(a, 0.86) for a in at["ring"]] + [_triple(at["bare"], 0.86)]
    assert singular_copies_first(reader, ring_only, EVERYWHERE) == ring_only


def test_a_copy_that_scores_well_below_the_best_is_not_its_equal(target):
    reader, at = target
    ranked = [_triple(a, 0.86) for a in at["ring"]] + [_triple(at["own"], 0.70)]
    assert singular_copies_first(reader, ranked, EVERYWHERE) == ranked


def test_zeros_around_a_value_say_nothing_about_look_alikes(target):
    reader, at = target
    assert look_alike_places(reader, at["bare"], EVERYWHERE) == 0
    assert look_alike_places(reader, at["own"], EVERYWHERE) == 1
