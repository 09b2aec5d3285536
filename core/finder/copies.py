"""Many copies of one struct: a pattern that tells the game's own copy apart, from a wider window.

Engines copy the player's struct around (a ring of snapshots, an interpolated and a predicted
copy, a view for the renderer): on one game the position lived in about 65 copies. Every window
inside the struct then matches every copy, whatever the bytes kept. What tells the game's own
copy apart lies around it: the object it is embedded in (a header before it, a footer after it).

`choose_widening` tries the narrow window first (signature.choose). When nothing there is unique,
the matches of its best pattern in each process's image are the other copies; the window widens
(signature.REACHES), keeping only sub-windows that hold, for every copy, a literal byte that
differs there. Where even the widest window has none, no pattern can be unique, and the builder
says so rather than trying more processes (core/finder/build.py then falls back to pointers).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.finder.signature import (
    MARGIN,
    REACHES,
    Clearances,
    Observation,
    Pick,
    WindowModel,
    candidate_windows,
    choose,
    derive,
    pattern_text,
)
from core.memory.pattern import parse_pattern
from core.memory.scanner import RegionFilter, scan

PROBES = 3   # narrow patterns whose matches are taken for copies
# (weak bytes allowed, margin) in the order tried, each at every reach: strong bytes clear of every other place
# first, wider if need be; then strong bytes merely unique, which the builder reports (signature.MARGIN says why
# unique is not enough); weak bytes only after. Measured on 6 fresh Minetest processes (each pattern built from 2
# to 4 of them, checked on the others): patterns of weak bytes chosen for their margin matched nowhere in 5 of 16
# held-out checks (zeroed fields hold leftovers in some launches), strong patterns without a margin missed none.
# Strong bytes far from the value before weak ones near it once took float high bytes 155 bytes away, which
# matched nowhere in the next launch: derive() now leaves out every word of a field that varied.
STRONG_SWEEPS = ((False, MARGIN), (False, 0))
WEAK_SWEEPS = ((True, MARGIN), (True, 0))
SWEEPS = STRONG_SWEEPS + WEAK_SWEEPS


@dataclass
class Widened:
    pick: Pick | None
    model: WindowModel       # the model the pick came from; the widest one when there is none
    copies: int = 0          # other copies of the struct seen, over all processes
    hopeless: bool = False   # no window at any reach tells every copy apart: no pattern can be unique


def choose_widening(observations: list[Observation], exclude: list[tuple[int, int]] | None = None,
                    sweeps: tuple[tuple[bool, int], ...] = SWEEPS) -> Widened:
    """The first of `sweeps` to find a pattern, each trying every reach in turn."""
    narrow = derive(observations, exclude, REACHES[0])
    widest = derive(observations, exclude, REACHES[-1])
    apart: np.ndarray | None = None   # the other copies, looked for once the narrow window has no pattern
    clearances = Clearances()   # scans are the cost: each pattern's are shared by the sweeps
    for weak, margin in sweeps:
        pick = choose(narrow, observations, weak=weak, margin=margin, clearances=clearances)
        if pick is not None:
            return Widened(pick, narrow, 0 if apart is None else len(apart))
        if apart is None:
            apart = other_copies(narrow, widest, observations)
        inner = REACHES[0]
        model = narrow
        for reach in REACHES[1:]:
            wider = derive(observations, exclude, reach)
            if (wider.low, wider.high) == (model.low, model.high):
                break  # the memory around the value ends within the last reach
            model = wider
            part = apart[:, model.low - widest.low:model.high - widest.low]
            pick = choose(model, observations, inner=inner, apart=part, weak=weak, margin=margin,
                          clearances=clearances)
            if pick is not None:
                return Widened(pick, model, len(apart))
            inner = reach
    copies = other_copies(narrow, widest, observations) if apart is None else apart
    none_tell = not candidate_windows(widest, True, apart=copies)
    return Widened(None, widest, len(copies), hopeless=bool(len(copies)) and none_tell)


def other_copies(narrow: WindowModel, widest: WindowModel, observations: list[Observation]) -> np.ndarray:
    """One row per other place, in any process, where one of the narrow model's best patterns matches: True
    where the bytes around it (as `widest` spans them) differ from those around the value."""
    length = widest.high - widest.low
    rows: list[np.ndarray] = []
    probes = candidate_windows(narrow, False)[:PROBES] or candidate_windows(narrow, True)[:PROBES]
    for observation in observations:
        image = observation.image
        if image is None:
            continue
        own = np.frombuffer(image.read(observation.address + widest.low, length), np.uint8)
        if len(own) != length:
            continue
        seen: set[int] = {observation.address}
        for _, a, b, mask in probes:
            pattern = parse_pattern(pattern_text(narrow.values[a:b], mask))
            for match in scan(image, pattern, RegionFilter(perms="rw")):
                copy = match.address - (a + narrow.low)
                if copy in seen:
                    continue
                seen.add(copy)
                there = np.frombuffer(image.read(copy + widest.low, length), np.uint8)
                row = np.ones(length, bool)  # bytes beyond what could be read differ
                row[:len(there)] = there != own[:len(there)]
                rows.append(row)
    return np.array(rows, dtype=bool).reshape(len(rows), length)
