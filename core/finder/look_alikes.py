"""Among copies of the position that the moves cannot tell apart, put first the one in a struct of its own.

A game may keep the position in many places that move together: the player's object, a camera, a snapshot
ring or a pool of look-alike structs. The moves rank them alike (Minetest: nine or more copies tied exactly),
and ties then fall to the lowest address, often a ring's member. A signature can never tell one member of a
ring of look-alike structs from its siblings ("the value lives in 10 copies of one struct"), while a copy in a
struct of its own can be signed. So, among the best candidate's equals (the same values, about the same
score), a copy whose surroundings appear nowhere else in memory goes first; the order is otherwise kept, and a
candidate with other values never moves ahead. Measured on Minetest 5.6.1 in three fresh processes: the
16 bytes either side of the copy in the player's own object were found once (as were a few other copies'),
those of each ring member in 3 places.
"""

from __future__ import annotations

import math

from core.finder.ranking import RankedTriple
from core.memory.pattern import parse_pattern
from core.memory.readers import MemoryReader
from core.memory.scanner import RegionFilter, scan

AROUND = 16            # bytes either side of the value compared with the rest of memory
MIN_NONZERO = 8        # fewer non-zero bytes around it: zeros match everywhere, so its count says nothing
VALUE_BYTES = 12
CONSIDERED = 12        # the best candidates looked at
EQUAL_SCORE = 0.95     # an equal scores at least this share of the best's
SINGULAR, UNKNOWN, REPEATED = 0, 1, 2


def singular_copies_first(reader: MemoryReader, candidates: list[RankedTriple],
                          region_filter: RegionFilter) -> list[RankedTriple]:
    """The candidates, with the best's equals reordered: a copy in a struct of its own first, then copies whose
    surroundings could not be counted, then those whose surroundings repeat elsewhere. Each equal gets the term
    `look_alikes`: the places its surroundings were found (0: could not be counted)."""
    if len(candidates) < 2:
        return candidates
    best = candidates[0]
    equals = [c for c in candidates[:CONSIDERED]
              if c.score >= EQUAL_SCORE * best.score and _same_values(c.values, best.values)]
    if len(equals) < 2:
        return candidates
    kinds: dict[int, int] = {}
    for candidate in equals:
        places = look_alike_places(reader, candidate.address, region_filter)
        candidate.terms["look_alikes"] = float(places)
        kinds[id(candidate)] = SINGULAR if places == 1 else UNKNOWN if places == 0 else REPEATED
    if kinds[id(best)] == SINGULAR or SINGULAR not in kinds.values():
        return candidates
    reordered = sorted(equals, key=lambda c: kinds[id(c)])  # stable: rank order within each kind
    slots = iter(reordered)
    places_of_equals = {id(c) for c in equals}
    return [next(slots) if id(c) in places_of_equals else c for c in candidates]


def look_alike_places(reader: MemoryReader, address: int, region_filter: RegionFilter) -> int:
    """In how many places of the regions searched the AROUND bytes either side of the value at `address` occur
    (the value's own bytes aside); 0 where that says nothing: too few non-zero bytes, unreadable, or changed
    since it was read."""
    try:
        data = reader.read(address - AROUND, 2 * AROUND + VALUE_BYTES)
    except OSError:
        return 0
    if len(data) != 2 * AROUND + VALUE_BYTES:
        return 0
    around = data[:AROUND] + data[AROUND + VALUE_BYTES:]
    if sum(1 for byte in around if byte) < MIN_NONZERO:
        return 0
    text = " ".join([*(f"{b:02X}" for b in data[:AROUND]), *(["??"] * VALUE_BYTES),
                     *(f"{b:02X}" for b in data[AROUND + VALUE_BYTES:])])
    return len(scan(reader, parse_pattern(text), region_filter))


def _same_values(a: tuple[float, float, float], b: tuple[float, float, float]) -> bool:
    return all(math.isclose(x, y, rel_tol=1e-6, abs_tol=1e-4) for x, y in zip(a, b, strict=True))
