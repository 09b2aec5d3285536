"""Finding an AOB pattern where a few of its literal bytes may differ from memory.

A signature built from a handful of game processes can keep a byte that was the same in all of
them and differs in the next one. On Minetest the finder kept the sign byte of a float that is
-0.0 in most launches and +0.0 in about one in six, and its profile then failed to lock in 2 of 12
fresh launches. A profile may therefore allow `max_mismatches` (k) wrong literal bytes.

The search stays a substring search. The literal bytes are split into k + 1 disjoint parts (runs
of consecutive literal bytes, grouped so that each part has as long an anchor as possible). A
match with at most k wrong bytes leaves at least one part whole (pigeonhole), so it is among the
exact matches of some part. Each part is searched like any pattern (memmem on its anchor), and
every hit is checked against all the pattern's literal bytes at once with numpy.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from core.memory.pattern import Pattern, PatternError, parse_pattern
from core.memory.search import Buffer, find_all


@dataclass(frozen=True)
class Part:
    offset: int        # where the part starts inside the whole pattern
    pattern: Pattern   # the part's own literal bytes, wildcards elsewhere in its span


def literal_count(pattern: Pattern) -> int:
    return sum(1 for mask in pattern.masks if mask)


def max_tolerance(pattern: Pattern) -> int:
    """The most mismatches a pattern may allow: three quarters of its literal bytes must still match."""
    return literal_count(pattern) // 4


# A part is searched by memmem on its anchor; a part whose anchor is shorter (or none: zeros and nibbles only) hits
# nearly everywhere in zeroed memory and is checked place by place. On Minetest one such scan of a 300 MB image at
# 4 mismatches (a part of zeros alone) took over two minutes.
MIN_PART_ANCHOR = 3


def searchable_tolerance(pattern: Pattern, at_most: int) -> int:
    """The most mismatches, up to `at_most`, that `pattern` can be searched with cheaply: each of the k + 1 parts
    split_parts makes then holds a run of at least MIN_PART_ANCHOR whole non-zero literal bytes."""
    units = _units(pattern)
    good = sum(1 for unit in units if _anchor_length(pattern, unit) >= MIN_PART_ANCHOR)
    for tolerance in range(min(at_most, max_tolerance(pattern)), 0, -1):
        if len(units) >= tolerance + 1:
            # Parts are consecutive whole units, and split_parts keeps the weakest part's anchor as long as it can:
            # k + 1 parts can each hold a good unit exactly when there are k + 1 good units.
            if good >= tolerance + 1:
                return tolerance
        elif all(_anchor_length(pattern, part) >= MIN_PART_ANCHOR for part in _halved(units, tolerance + 1)):
            return tolerance
    return 0


def _halved(units: list[list[int]], count: int) -> list[list[int]]:
    """split_parts' own way to make `count` parts of fewer runs: halve the longest until there are enough."""
    units = list(units)
    while len(units) < count:
        longest = max(range(len(units)), key=lambda i: len(units[i]))
        run = units.pop(longest)
        units[longest:longest] = [run[:len(run) // 2], run[len(run) // 2:]]
    return units


def _units(pattern: Pattern) -> list[list[int]]:
    """Runs of consecutive literal positions."""
    units: list[list[int]] = []
    previous = -2
    for position, mask in enumerate(pattern.masks):
        if not mask:
            continue
        if position == previous + 1:
            units[-1].append(position)
        else:
            units.append([position])
        previous = position
    return units


def _anchor_length(pattern: Pattern, positions: list[int]) -> int:
    """The longest run of whole non-zero literal bytes among `positions` (what memmem would look for)."""
    best = run = 0
    previous = -2
    for position in positions:
        whole = pattern.masks[position] == 0xFF and pattern.values[position] != 0
        run = run + 1 if whole and position == previous + 1 else int(whole)
        best = max(best, run)
        previous = position
    return best


def split_parts(pattern: Pattern, tolerance: int) -> list[Part]:
    """k + 1 disjoint parts covering every literal byte of `pattern`, the weakest part's anchor as long as
    possible."""
    if tolerance < 0:
        raise PatternError("max_mismatches cannot be negative")
    limit = max_tolerance(pattern)
    if tolerance > limit:
        raise PatternError(f"max_mismatches {tolerance} is too many for a pattern with {literal_count(pattern)} "
                           f"literal bytes: at most {limit} (a quarter of them)")
    units = _halved(_units(pattern), tolerance + 1)  # too few runs: halve the longest (at least 4 bytes, see above)
    best: tuple[tuple[int, int], list[list[int]]] | None = None
    for cuts in itertools.combinations(range(1, len(units)), tolerance):
        bounds = (0, *cuts, len(units))
        groups = [list(itertools.chain.from_iterable(units[a:b])) for a, b in itertools.pairwise(bounds)]
        quality = (min(_anchor_length(pattern, g) for g in groups), min(len(g) for g in groups))
        if best is None or quality > best[0]:
            best = (quality, groups)
    assert best is not None
    tokens = pattern.text.split()
    parts: list[Part] = []
    for group in best[1]:
        start, end = group[0], group[-1] + 1
        kept = set(group)
        text = " ".join(tokens[i] if i in kept else "??" for i in range(start, end))
        parts.append(Part(start, parse_pattern(text)))
    return parts


def find_tolerant(pattern: Pattern, tolerance: int, parts: list[Part], data: Buffer,
                  end: int | None = None) -> list[tuple[int, int]]:
    """(start, wrong literal bytes) of every place in data[:end] where `pattern` matches with at most
    `tolerance` wrong literal bytes, in order. `parts` is split_parts(pattern, tolerance)."""
    end = len(data) if end is None else min(end, len(data))
    last_start = end - len(pattern)
    if last_start < 0:
        return []
    hits = [np.asarray(find_all(part.pattern, data, end), dtype=np.int64) - part.offset for part in parts]
    starts = np.unique(np.concatenate(hits)) if hits else np.empty(0, np.int64)
    starts = starts[(starts >= 0) & (starts <= last_start)]
    if not len(starts):
        return []
    array = np.frombuffer(data, dtype=np.uint8, count=end)
    wrong = np.zeros(len(starts), dtype=np.int32)
    for position, (value, mask) in enumerate(zip(pattern.values, pattern.masks)):
        if mask:
            wrong += (array[starts + position] & mask) != value
    kept = wrong <= tolerance
    return list(zip(starts[kept].tolist(), wrong[kept].tolist()))


def mismatches_at(pattern: Pattern, data: Buffer, position: int) -> int | None:
    """How many literal bytes of `pattern` differ from data at `position`; None if it does not fit there."""
    if position < 0 or position + len(pattern) > len(data):
        return None
    window = np.frombuffer(data, dtype=np.uint8, count=len(pattern), offset=position)
    values = np.frombuffer(pattern.values, dtype=np.uint8)
    masks = np.frombuffer(pattern.masks, dtype=np.uint8)
    return int(((window & masks) != values).sum())
