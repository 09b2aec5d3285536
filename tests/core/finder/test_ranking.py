"""Ranking on hand-made walks: which triples count as a position at all."""

from __future__ import annotations

import numpy as np
import pytest

from core.finder.ranking import rank
from core.finder.track import MoveRecord

STEPS = {"forward": (0.0, 3.0), "back": (0.0, -3.0), "right": (3.0, 0.0), "left": (-3.0, 0.0)}


def walks(rounds: int, rows: list[str | int]) -> tuple[np.ndarray, list[MoveRecord]]:
    """Per row, how a triple (x, y up, z) behaves over `rounds` rounds of the four walking steps:
    'walker' follows every step, an int N follows all but the first N (walls), 'once' changes in the
    first step only (a setting written once)."""
    now = np.array([[10.0, 1.0, 20.0]] * len(rows), np.float32)
    moves = []
    for round_number in range(rounds):
        for index, (name, (dx, dz)) in enumerate(STEPS.items()):
            number = round_number * len(STEPS) + index
            before = now.copy()
            for row, kind in enumerate(rows):
                if kind == "walker" or (isinstance(kind, int) and number >= kind):
                    now[row] += (dx, 0.0, dz)
                elif kind == "once" and number == 0:
                    now[row] += (5.0, 0.0, 0.0)
            moves.append(MoveRecord(round_number, name, before, now.copy(), None))
    return now, moves


def test_a_triple_that_changed_in_one_walk_only_is_not_ranked_while_a_walker_blocked_once_is():
    now, moves = walks(3, ["once", "walker", 1])
    addresses = np.array([0x1000, 0x2000, 0x3000], np.uint64)
    ranked = rank(addresses, now, moves, move_seconds=0.6)
    assert [r.address for r in ranked] == [0x2000, 0x3000]
    assert ranked[0].speed == pytest.approx(5.0)  # 3 units in 0.6 s


@pytest.mark.parametrize(("blocked", "ranked"), [(6, True), (7, False)])
def test_a_position_must_have_moved_in_at_least_half_the_walks(blocked, ranked):
    now, moves = walks(3, [blocked])  # 12 walks, the first `blocked` of them against a wall
    assert bool(rank(np.array([0x1000], np.uint64), now, moves, move_seconds=0.6)) is ranked


def test_nothing_is_ranked_when_nothing_walked():
    now, moves = walks(3, ["once", "once"])
    assert rank(np.array([0x1000, 0x2000], np.uint64), now, moves, move_seconds=0.6) == []
