"""Ranking on hand-made walks: which triples count as a position at all."""

from __future__ import annotations

import numpy as np
import pytest

from core.finder.ranking import first_structs, rank
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



def test_the_position_with_its_ground_axes_swapped_ranks_below_the_position_it_mirrors():
    """On Minetest a window [z, 1.0, x] straddling two structs walks exactly like the position, mirrored,
    and its constant middle is a perfectly level height; it came within 2% of the position in one run and
    above it in another. Five copies of the position here bob a little in height as the player walks."""
    _, moves = walks(3, ["walker"] * 5)
    heights = [0.3 * (number % 2) for number in range(len(moves) + 1)]  # uneven ground
    joined: list[MoveRecord] = []
    for number, move in enumerate(moves):
        before, after = move.before.copy(), move.after.copy()
        before[:, 1] += heights[number]
        after[:, 1] += heights[number + 1]
        mirror_before, mirror_after = before[:1, [2, 1, 0]].copy(), after[:1, [2, 1, 0]].copy()
        mirror_before[:, 1] = mirror_after[:, 1] = 1.0
        joined.append(MoveRecord(move.round, move.name, np.vstack([before, mirror_before]),
                                 np.vstack([after, mirror_after]), None))
    addresses = np.array([0x1000, 0x2000, 0x3000, 0x4000, 0x5000, 0x6000], np.uint64)
    ranked = rank(addresses, joined[-1].after, joined, move_seconds=0.6)
    mirrored = next(r for r in ranked if r.address == 0x6000)
    assert ranked[-1].address == 0x6000
    assert mirrored.terms["permuted"] == 1.0 and ranked[0].terms["permuted"] == 0.0
    assert mirrored.score < 0.6 * ranked[0].score


def vec4_walks(copies: int) -> list[MoveRecord]:
    """Three rounds of walks read from every window, 4 bytes apart, of an array of `copies` (x, y, z, 1.0) copies
    of the position, on uneven ground."""
    _, moves = walks(3, ["walker"])
    heights = [0.3 * (number % 2) for number in range(len(moves) + 1)]
    joined: list[MoveRecord] = []
    for number, move in enumerate(moves):
        rows = []
        for values, height in ((move.before[0], heights[number]), (move.after[0], heights[number + 1])):
            floats = np.tile([values[0], values[1] + height, values[2], 1.0], copies).astype(np.float32)
            rows.append(np.stack([floats[i:i + 3] for i in range(len(floats) - 2)]))
        joined.append(MoveRecord(move.round, move.name, rows[0], rows[1], None))
    return joined


def test_copies_kept_as_vec4s_in_an_array_outrank_the_mirrored_windows_between_them():
    """Minetest keeps copies of the position as (x, y, z, 1.0) in arrays: between two of them lies the window
    [z, 1.0, x], 8 bytes from each, mirrored and perfectly level. On uneven ground its bare fit beat theirs, and
    keeping one window per struct by that fit dropped every copy beside it: a full run ranked only the mirror
    (score 0.785) and not one of the 17 copies. Overlapping windows are now weighed on their whole score."""
    joined = vec4_walks(copies=4)
    addresses = 0x7000 + 4 * np.arange(len(joined[0].before), dtype=np.uint64)
    ranked = rank(addresses, joined[-1].after, joined, move_seconds=0.6)
    offsets = [int(r.address) - 0x7000 for r in ranked]
    assert offsets[0] % 16 == 0, [r.to_json() for r in ranked]  # an (x, y, z) at the start of a vec4
    copies = [offset for offset in offsets if offset % 16 == 0]
    assert len(copies) >= 2 and ranked[0].copies >= 1
    mirrors = [r for r in ranked if (int(r.address) - 0x7000) % 16 == 8]
    assert all(m.score < 0.6 * ranked[0].score for m in mirrors)


def test_the_pool_counts_structs_not_windows():
    """Every window of a pooled struct stays in the pool with it, however late it comes in fit order."""
    addresses = np.array([0x100, 0x104, 0x200, 0x108, 0x300, 0x204], np.uint64)
    by_fit = np.arange(len(addresses))
    assert first_structs(addresses, by_fit, 2, 100).tolist() == [0, 1, 2, 3, 5]  # not 0x300, a third struct
    assert first_structs(addresses, by_fit, 3, 100).tolist() == [0, 1, 2, 3, 4, 5]
    assert first_structs(addresses, by_fit, 3, 4).tolist() == [0, 1, 2, 3]  # the best fits, when windows run out


def test_a_small_pool_of_vec4_copies_still_ranks_a_copy_above_the_mirrors():
    """Pooled by fit, the mirrors come first (perfectly level): the copies beside them must come in with them."""
    joined = vec4_walks(copies=4)
    addresses = 0x7000 + 4 * np.arange(len(joined[0].before), dtype=np.uint64)
    ranked = rank(addresses, joined[-1].after, joined, move_seconds=0.6, pool=2)
    assert (int(ranked[0].address) - 0x7000) % 16 == 0, [r.to_json() for r in ranked]


def test_two_windows_of_one_struct_are_not_counted_as_copies_of_each_other():
    """(x, x, z, c): the windows at +0 (y up) and +4 (z up) both walk on (x, z); they are one struct read twice."""
    _, moves = walks(3, ["walker"])
    joined = []
    for move in moves:
        rows = []
        for values in (move.before[0], move.after[0]):
            floats = np.array([values[0], values[0], values[2], 7.0], np.float32)
            rows.append(np.stack([floats[0:3], floats[1:4]]))
        joined.append(MoveRecord(move.round, move.name, rows[0], rows[1], None))
    ranked = rank(np.array([0x5000, 0x5004], np.uint64), joined[-1].after, joined, move_seconds=0.6)
    assert len(ranked) == 1 and ranked[0].address == 0x5004 and ranked[0].copies == 0, [r.to_json() for r in ranked]


def test_triples_that_only_end_on_the_positions_values_swapped_do_not_make_it_a_mirror():
    """Three copies of (z, c, 10) end on the ground values (20, 10) of a position at (10, 20), swapped, but move only
    when it walks forward or back: no mirror walks so, and the position keeps its whole score (the built-in world's
    (y, z, yaw) windows halved it and ranked nonsense first)."""
    _, moves = walks(3, ["walker"] * 4)
    for move in moves:
        for values in (move.before, move.after):
            values[1:, 0] = values[1:, 2]  # z into the first slot,
            values[1:, 1] = 1.0
            values[1:, 2] = 10.0            # and the position's x, constant, into the last
    addresses = np.array([0x1000, 0x2000, 0x3000, 0x4000], np.uint64)
    ranked = rank(addresses, moves[-1].after, moves, move_seconds=0.6)
    position = next(r for r in ranked if r.address == 0x1000)
    assert position.terms["permuted"] == 0.0 and ranked[0].address == 0x1000, [r.to_json() for r in ranked]


def test_a_window_on_a_double_copy_of_the_position_ranks_below_the_position():
    """A program may keep the position as doubles too (the built-in world's sound keeps its listener's poses
    so, 14 rows of them): three floats read out of such a row walk with the position, at about a tenth of its
    speed, and six rows of them agree with each other. Read as a double, the row holds the position's own
    coordinate; the float position itself must still come first."""
    _, moves = walks(3, ["walker"])
    rows = 6
    windows: list[MoveRecord] = []
    for move in moves:
        def window(position: np.ndarray) -> np.ndarray:
            # a row of doubles [x, z] seen from its fifth byte: x's high half, then z's low and high halves
            halves = np.array([[position[0, 0], position[0, 2]]], np.float64).view(np.float32)
            return np.repeat(halves[:, 1:4], rows, axis=0)
        windows.append(MoveRecord(move.round, move.name, np.vstack([move.before, window(move.before)]),
                                  np.vstack([move.after, window(move.after)]), None))
    addresses = np.array([0x1000] + [0x2004 + 32 * k for k in range(rows)], np.uint64)
    ranked = rank(addresses, windows[-1].after, windows, move_seconds=0.6)
    assert ranked[0].address == 0x1000 and ranked[0].terms["double_view"] == 0.0
    shadows = [r for r in ranked if r.address != 0x1000]
    assert shadows and all(r.terms["double_view"] == 1.0 for r in shadows)


def fixed_point_walk(true_copies: int, rounded_copies: int,
                     falling: bool = False) -> tuple[np.ndarray, np.ndarray, list[MoveRecord]]:
    """A position with the fractions a simulation gives, in `true_copies` places, and `rounded_copies` copies of it
    rounded down to 1/16 of a unit (the Cube 2 engine's network encoding). `falling`: in the last walk the player
    falls off a ledge, and the rounded copy, lagging, is 0.375 higher when it ends."""
    _, moves = walks(3, ["walker"])
    start = np.array([0.3127, 0.0, 0.7391], np.float32)

    def copies(position: np.ndarray) -> np.ndarray:
        fine = position + start
        rounded = np.floor(fine * 16) / 16
        return np.vstack([np.repeat(fine, true_copies, axis=0), np.repeat(rounded, rounded_copies, axis=0)])

    joined = [MoveRecord(m.round, m.name, copies(m.before), copies(m.after), None) for m in moves]
    if falling:
        last = joined[-1].after
        last[:, 1] -= 150.0
        last[true_copies:, 1] += 0.375
    addresses = np.array([0x1000 + 0x100 * k for k in range(true_copies + rounded_copies)], np.uint64)
    return addresses, joined[-1].after, joined


@pytest.mark.parametrize("falling", [False, True])
def test_a_copy_rounded_to_a_fixed_point_grid_ranks_below_the_position_it_rounds(falling):
    """Red Eclipse keeps its network copy of the player's position in 1/16 units, in more places than the
    player's own struct: held by more copies, that copy ranked first, and no signature or pointer led to it in a
    fresh process. The finer copy, the game's own, must come first, also when the last walk ended in a fall
    (a player who walked off the edge of the dance floor), which the rounded copy follows late."""
    addresses, now, moves = fixed_point_walk(true_copies=2, rounded_copies=4, falling=falling)
    ranked = rank(addresses, now, moves, move_seconds=0.6)
    assert ranked[0].address in (0x1000, 0x1100) and ranked[0].terms["coarse_copy"] == 0.0
    rounded = [r for r in ranked if r.address >= 0x1200]
    assert len(rounded) == 4 and all(r.terms["coarse_copy"] == 1.0 for r in rounded)


def test_a_position_on_a_fixed_point_grid_with_no_finer_copy_is_not_demoted():
    """A game whose position itself is fixed point (or the built-in world's round lockstep moves) has no finer
    copy beside it: nothing is demoted, and its copies rank as before."""
    addresses, now, moves = fixed_point_walk(true_copies=0, rounded_copies=3)
    ranked = rank(addresses, now, moves, move_seconds=0.6)
    assert len(ranked) == 3 and all(r.terms["coarse_copy"] == 0.0 for r in ranked)


@pytest.mark.parametrize(("best", "warned"), [(0.31, True), (0.74, False)])
def test_a_weak_best_candidate_comes_with_what_to_try(best, warned):
    """Red Eclipse's player slides on after a key is released: the finder, resting too briefly, printed ten
    candidates of junk scoring 0.13 to 0.31 and nothing else. A weak best must say so, and name the causes."""
    from core.finder.position import PositionResult
    from core.finder.ranking import RankedTriple

    result = PositionResult([RankedTriple(0x1000, (1.0, 2.0, 3.0), 1, best, best, 4.0)], 60.0, [], 0)
    assert (result.warning is not None) is warned
    assert result.to_json()["warning"] == result.warning
    if warned:
        assert "step_settle_s" in result.warning and "open, flat ground" in result.warning


def test_a_best_candidate_of_noise_says_the_character_most_likely_never_moved():
    """An OpenArena player teleported inside a wall never moved: the finder's best scored 0.001, and the weak-score
    causes (momentum, walls stopping some walks) sent the user the wrong way for minutes."""
    from core.finder.position import PositionResult
    from core.finder.ranking import RankedTriple

    result = PositionResult([RankedTriple(0x1000, (0.0, 0.0, 0.0), 1, 0.001, 0.001, 0.0)], 60.0, [], 0)
    assert result.warning is not None and "the character did not move at all" in result.warning
    assert "stuck inside a wall" in result.warning and "step_settle_s" not in result.warning


def test_a_triple_read_as_nan_the_moment_a_walk_ended_is_never_offered_with_a_nan_score():
    """On Red Eclipse a triple of -0.0 that read as NaN the moment one walk ended was listed ninth with "score
    nan": a NaN is no score, and a triple that held one is no position."""
    now, plain = walks(3, ["walker", "walker"])
    moves = [MoveRecord(m.round, m.name, m.before, m.after, (m.before + m.after) / 2) for m in plain]
    moves[4].end[1] = np.nan
    ranked = rank(np.array([0x1000, 0x2000], np.uint64), now, moves, move_seconds=0.6)
    assert [r.address for r in ranked] == [0x1000]


def test_a_triple_with_a_slot_that_holds_no_float_ranks_below_the_position_even_with_copies():
    """In the built-in world four copies of two floats walking with the player, beside a constant 2.2e-38 (no float a
    game computes: an integer's bytes), outranked the position, which has no copy there, in 1 one-round search
    of 4. Copies or not, such a triple must rank below the position."""
    _, moves = walks(3, ["walker"])
    impostors = 4

    def with_impostors(position: np.ndarray) -> np.ndarray:
        impostor = position.copy()
        impostor[:, 1] = np.float32(2.2e-38)
        return np.vstack([position, np.repeat(impostor, impostors, axis=0)])

    joined = [MoveRecord(m.round, m.name, with_impostors(m.before), with_impostors(m.after), None) for m in moves]
    addresses = np.array([0x1000] + [0x2000 + 0x100 * k for k in range(impostors)], np.uint64)
    ranked = rank(addresses, joined[-1].after, joined, move_seconds=0.6)
    assert ranked[0].address == 0x1000 and ranked[0].terms["not_float"] == 0.0
    others = [r for r in ranked if r.address != 0x1000]
    assert len(others) == impostors and all(r.terms["not_float"] == 1.0 for r in others)
