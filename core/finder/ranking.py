"""Ranking candidate position triples by how well they follow the commanded moves.

For each candidate and each way of reading it (the middle value as height, "y up", as Minetest
and most engines; or the last, "z up", as the built-in world), the horizontal displacement of
every walking step is checked against the protocol:
  moved      every walking step moved it;
  returns    back undoes forward and left undoes right;
  square     strafing is at right angles to walking forward;
  even       forward and back (right and left) cover the same distance;
  rotation   turning the camera turns forward and strafe directions by the same angle;
  level      the height changes little compared to the horizontal moves.
One more term is measured but not scored, `right_turn`: the sine of the angle from walking forward to strafing
right on the ground plane, -1 where the ground axes read as a map does (x east, y north: right is clockwise from
forward) and +1 where they are mirrored (the same values in the other order). Engines differ in which they
store, so it ranks nothing; it tells a copy of the position from a window that reads it mirrored (see
core/finder/verify.py).
Then a plausible walking speed (units per second between 0.05 and 2000), agreement with other
copies (the true position has copies: render nodes, lagging and server-side ones), and among
copies: which one leads (sampled the moment a move ends, the true position is already there
while lagging copies are still on their way), which one keeps its height while walking (an eye
or camera position bobs), and which holds the value most copies hold (not an eye height above
the feet).
"""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from dataclasses import dataclass, field
from typing import cast

import numpy as np

from core.finder.track import MoveRecord

SPEED_RANGE = (0.05, 2000.0)
MIN_WALKED_SHARE = 0.5   # of the walking steps a candidate must have moved in to be ranked at all
_WEIGHTS = {"returns": 2.0, "square": 1.5, "even": 1.0, "rotation": 1.5, "level": 1.0}
PERMUTED_WEIGHT = 0.5  # a permuted copy still ranks, far below the position it mirrors
PERMUTED_FIT_SHARE = 0.8  # what it mirrors fits the moves at least this share as well (a swap changes no term)
DOUBLE_VIEW_WEIGHT = 0.5  # so does a triple read out of a double's bytes that holds a coordinate
COARSE_COPY_WEIGHT = 0.5  # and a copy rounded to a fixed-point grid, beside a copy that is not
NOT_FLOAT_WEIGHT = 0.5  # and a triple with a slot that held no float a game computes (see NOT_FLOAT_BELOW)
# Float arithmetic leaves residues like 1e-17 where a coordinate should be 0 (cos 90 degrees times a speed), never
# 1e-38: a slot that held a nonzero value this small holds something else (an integer, bytes of a pointer). In the
# built-in world four copies of such a triple, two floats beside a constant 2.2e-38, walked at 3.25 units/s and
# outranked the position (alone in memory) in 1 run of 4 of one-round searches.
NOT_FLOAT_BELOW = 1e-30
COARSEST_FIXED_POINT = 1 / 4   # a grid this fine or finer is a fixed-point encoding, not round coordinates
FINEST_FIXED_POINT = 1 / 256
_TINY = 1e-12
MIRROR_SINE = 0.5  # |right_turn| from which a turn counts as measured (strafing is square to forward: about 1)
VERTICAL_NAMES = {1: "y", 2: "z"}


@dataclass
class RankedTriple:
    address: int
    values: tuple[float, float, float]
    vertical: int                  # index of the height within the triple: 1 (y up) or 2 (z up)
    score: float
    consistency: float
    speed: float                   # units per second while walking
    copies: int = 0
    lead: float = 1.0
    terms: dict[str, float] = field(default_factory=dict[str, float])

    @property
    def up(self) -> str:
        return VERTICAL_NAMES[self.vertical]

    @property
    def right_turn(self) -> float | None:
        """-1: its ground axes read as a map does; +1: mirrored; None: not measured (no strafing)."""
        return self.terms.get("right_turn")

    def to_json(self) -> dict[str, object]:
        return {"address": self.address, "address_hex": f"{self.address:#x}", "values": list(self.values),
                "up": self.up, "score": round(self.score, 4), "consistency": round(self.consistency, 4),
                "speed": round(self.speed, 4), "copies": self.copies, "lead": round(self.lead, 3),
                "terms": {k: round(v, 3) for k, v in self.terms.items()}}


def turn_sign(right_turn: float | None) -> int:
    """-1 (clockwise: a map's axes) or +1 (mirrored) where a right_turn was clearly measured; 0 where it was not."""
    if right_turn is None or math.isnan(right_turn) or abs(right_turn) < MIRROR_SINE:
        return 0
    return -1 if right_turn < 0 else 1


def _horizontal(vectors: np.ndarray, vertical: int) -> np.ndarray:
    return vectors[..., [i for i in range(3) if i != vertical]]


def _norm(v: np.ndarray) -> np.ndarray:
    return np.sqrt((v.astype(np.float64) ** 2).sum(axis=-1))


def _angle(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Signed angle from a to b, per row."""
    return np.arctan2(a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0], (a * b).sum(axis=1))


def _by_round(moves: list[MoveRecord]) -> dict[int, dict[str, int]]:
    rounds: dict[int, dict[str, int]] = {}
    for index, move in enumerate(moves):
        rounds.setdefault(move.round, {})[move.name] = index
    return rounds


def _terms(moves: list[MoveRecord], vertical: int) -> dict[str, np.ndarray]:
    deltas = np.stack([(m.after.astype(np.float64) - m.before.astype(np.float64)) for m in moves], axis=1)
    horizontal = _horizontal(deltas, vertical)                 # (n, M, 2)
    magnitude = _norm(horizontal)                              # (n, M)
    typical = np.median(magnitude, axis=1)
    moved = np.where(typical > 0, (magnitude > 0.25 * typical[:, None]).mean(axis=1), 0.0)
    rounds = _by_round(moves)
    returns: list[np.ndarray] = []
    square: list[np.ndarray] = []
    even: list[np.ndarray] = []
    rotation: list[np.ndarray] = []
    right_turn: list[np.ndarray] = []
    for steps in rounds.values():
        for a, b in (("forward", "back"), ("right", "left")):
            if a in steps and b in steps:
                ha, hb = horizontal[:, steps[a]], horizontal[:, steps[b]]
                ma, mb = magnitude[:, steps[a]], magnitude[:, steps[b]]
                returns.append(1.0 - np.minimum(1.0, _norm(ha + hb) / (ma + mb + _TINY)))
                even.append(np.minimum(ma, mb) / (np.maximum(ma, mb) + _TINY))
        if "forward" in steps and "right" in steps:
            hf, hr = horizontal[:, steps["forward"]], horizontal[:, steps["right"]]
            cosine = (hf * hr).sum(axis=1) / (magnitude[:, steps["forward"]] * magnitude[:, steps["right"]] + _TINY)
            both = (magnitude[:, steps["forward"]] > 0) & (magnitude[:, steps["right"]] > 0)
            square.append(np.where(both, 1.0 - np.abs(cosine), 0.0))
            sine = (hf[:, 0] * hr[:, 1] - hf[:, 1] * hr[:, 0]) / \
                (magnitude[:, steps["forward"]] * magnitude[:, steps["right"]] + _TINY)
            # A move that went nowhere (a real-time game can miss a key) or barely moved tells no turn: not
            # counted, rather than counted as none (one missed move in three rounds read -0.67 for -1)
            walked = (magnitude[:, steps["forward"]] > 0.25 * typical) & (magnitude[:, steps["right"]] > 0.25 * typical)
            right_turn.append(np.where(walked, sine, np.nan))
    ordered = [rounds[r] for r in sorted(rounds)]
    for first, second in itertools.pairwise(ordered):
        if all(name in first and name in second for name in ("forward", "right")):
            turn_forward = _angle(horizontal[:, first["forward"]], horizontal[:, second["forward"]])
            turn_right = _angle(horizontal[:, first["right"]], horizontal[:, second["right"]])
            difference = np.abs((turn_forward - turn_right + math.pi) % (2 * math.pi) - math.pi)
            rotation.append(1.0 - difference / math.pi)
    height = np.abs(deltas[..., vertical]).mean(axis=1)
    level = 1.0 - np.minimum(1.0, height / (magnitude.mean(axis=1) + _TINY))
    n = len(magnitude)

    def mean(parts: list[np.ndarray]) -> np.ndarray:
        return np.mean(parts, axis=0) if parts else np.full(n, np.nan)  # NaN: not measured, not weighed

    turns = np.full(n, np.nan)
    if right_turn:
        stacked = np.stack(right_turn, axis=1)
        counted = np.isfinite(stacked).sum(axis=1)
        turns = np.where(counted > 0, np.nansum(stacked, axis=1) / np.maximum(counted, 1), np.nan)
    return {"moved": moved, "returns": mean(returns), "square": mean(square), "even": mean(even),
            "rotation": mean(rotation), "level": level, "typical": typical, "right_turn": turns}


def speed_plausibility(speed: np.ndarray) -> np.ndarray:
    low, high = SPEED_RANGE
    with np.errstate(divide="ignore"):
        below = np.log10(np.maximum(speed, _TINY) / low)
        above = np.log10(np.maximum(speed, _TINY) / high)
    distance = np.where(speed < low, -below, np.where(speed > high, above, 0.0))
    return np.exp(-2.0 * distance)


def _lead(moves: list[MoveRecord], vertical: np.ndarray) -> np.ndarray:
    """Mean share of each step's final horizontal displacement already covered when it ended."""
    shares: list[np.ndarray] = []
    rows = np.arange(len(vertical))
    for move in moves:
        if move.end is None:
            continue
        total = move.after.astype(np.float64) - move.before.astype(np.float64)
        early = move.end.astype(np.float64) - move.before.astype(np.float64)
        keep = np.ones((len(rows), 3), bool)
        keep[rows, vertical] = False
        total_h = np.sqrt(np.where(keep, total ** 2, 0).sum(axis=1))
        early_h = np.sqrt(np.where(keep, early ** 2, 0).sum(axis=1))
        shares.append(np.where(total_h > 0, np.minimum(1.5, early_h / (total_h + _TINY)), np.nan))
    if not shares:
        return np.ones(len(vertical))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a candidate that never moved has no share
        lead = np.nanmean(np.stack(shares, axis=1), axis=1)
    return np.where(np.isnan(lead), 1.0, lead)


def fit(moves: list[MoveRecord], vertical: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Per candidate: how well the moves fit the protocol when `vertical` is the height (0 to 1),
    and the terms behind it."""
    terms = _terms(moves, vertical)
    measured = {k: w for k, w in _WEIGHTS.items() if not np.isnan(terms[k]).all()}
    total = sum(measured.values())
    # Every walking step must move a position: a triple that sat out some of them is a poor one
    # however neatly the rest fits, hence the square.
    return terms["moved"] ** 2 * sum(w * terms[k] for k, w in measured.items()) / total, terms


def _steadiness(moves: list[MoveRecord], vertical: np.ndarray) -> np.ndarray:
    """1 for a triple whose height, the moment a walk ends, lies where its horizontal progress says it
    should; less for one that bobs. The position itself moves along the ground; a camera or a head
    bobs while walking (Minetest's eye position does, by about 0.1 node in 2)."""
    wobble: list[np.ndarray] = []
    rows = np.arange(len(vertical))
    for move in moves:
        if move.end is None:
            continue
        before, end, after = move.before.astype(np.float64), move.end.astype(np.float64), move.after.astype(np.float64)
        keep = np.ones((len(rows), 3), bool)
        keep[rows, vertical] = False
        total = np.sqrt(np.where(keep, (after - before) ** 2, 0).sum(axis=1))
        early = np.sqrt(np.where(keep, (end - before) ** 2, 0).sum(axis=1))
        share = np.where(total > 0, early / np.maximum(total, _TINY), 1.0)
        low, high, now = before[rows, vertical], after[rows, vertical], end[rows, vertical]
        expected = low + share * (high - low)
        wobble.append(np.where(total > 0, np.abs(now - expected) / np.maximum(total, _TINY), 0.0))
    if not wobble:
        return np.ones(len(vertical))
    return np.exp(-np.mean(wobble, axis=0) / 0.002)


def rank(addresses: np.ndarray, now: np.ndarray, moves: list[MoveRecord], move_seconds: float,
         top: int = 20, pool: int = 400) -> list[RankedTriple]:
    """The best `top` candidates, best first (overlapping windows of one struct count once), weighed among the
    `pool` structs that fit the moves best; none when no candidate moved in at least MIN_WALKED_SHARE of the
    walking steps."""
    if len(addresses) == 0 or not moves:
        return []
    fits = {v: fit(moves, v) for v in VERTICAL_NAMES}
    by_axis = {v: terms for v, (_, terms) in fits.items()}
    consistency = {v: score for v, (score, _) in fits.items()}
    vertical = np.where(consistency[2] > consistency[1], 2, 1)
    chosen = np.where(vertical == 2, consistency[2], consistency[1])
    typical = np.where(vertical == 2, by_axis[2]["typical"], by_axis[1]["typical"])
    speed = typical / move_seconds
    base = chosen * speed_plausibility(speed)
    walked = np.where(vertical == 2, by_axis[2]["moved"], by_axis[1]["moved"])
    # A position moves in most walking steps (a wall may block one). A triple that changed once, say a
    # setting written during the first walk, survives every standing check but is no position at all.
    # A triple that held a NaN in some sample (a float read mid-write, or no float at all) scores NaN: no position.
    eligible = np.flatnonzero((walked >= MIN_WALKED_SHARE) & np.isfinite(base))
    if len(eligible) == 0:
        return []
    # Overlapping windows (4 or 8 bytes apart) stay in the pool until their whole score is known: kept by the fit
    # alone, a mirrored window [z, 1.0, x] between two vec4 copies (x, y, z, 1.0) beat them on uneven ground (its
    # constant middle is perfectly level) and dropped both, before their copies or its mirroring could count.
    order = first_structs(addresses, eligible[np.argsort(-base[eligible], kind="stable")], pool, 3 * pool)
    pooled = [m.select(order) for m in moves]
    with np.errstate(invalid="ignore"):  # a value sampled mid-move may be a signalling NaN (not a position)
        lead = _lead(pooled, vertical[order])
        steady = _steadiness(pooled, vertical[order])
    directions = _directions(moves, order, vertical[order])
    # Windows of one struct share floats: none is a copy, a permutation or a double view of another
    overlap = _overlapping(addresses[order])
    agree = (directions @ directions.T > 0.98) & ~overlap
    np.fill_diagonal(agree, False)
    copies = agree.sum(axis=1)
    group_lead = np.array([max(lead[i], lead[agree[i]].max()) if copies[i] else lead[i] for i in range(len(order))])
    relative_lead = np.clip(lead / np.maximum(group_lead, _TINY), 0.0, 1.0)
    support = np.minimum(copies, 4) / 4.0
    # Of agreeing copies, those holding the value most of them hold are the position itself; a copy
    # at a constant offset (an eye or camera height) holds a value fewer copies share. A group of agreeing
    # triples that share no value at all is derived from the position, not the position: Minetest keeps the
    # nodes around the player (node centres x 10), which move in whole nodes and so fit the walking protocol
    # perfectly, steadier than the real position; weighed at 0.1 they outranked it in one run of four.
    values = now[order].astype(np.float64)
    equal = (np.abs(values[:, None, :] - values[None, :, :])
             <= 1e-4 * np.maximum(1.0, np.abs(values[:, None, :]))).all(axis=2) & agree
    common = np.where(copies > 0, equal.sum(axis=1) / np.maximum(copies, 1), 1.0)
    permuted = _permuted_copies(values, vertical[order], copies, overlap, base[order])
    double_view = _double_views(addresses[order], now[order], overlap)
    coarse = _coarse_copies(pooled, values, agree)
    not_float = _not_floats(pooled, values)
    final = (base[order] * (0.75 + 0.25 * support) * (0.8 + 0.2 * relative_lead) * (0.9 + 0.1 * steady)
             * (0.8 + 0.2 * common) * np.where(permuted, PERMUTED_WEIGHT, 1.0)
             * np.where(double_view, DOUBLE_VIEW_WEIGHT, 1.0) * np.where(coarse, COARSE_COPY_WEIGHT, 1.0)
             * np.where(not_float, NOT_FLOAT_WEIGHT, 1.0))
    ranked: list[RankedTriple] = []
    finite = np.flatnonzero(np.isfinite(final))
    best_first = finite[np.argsort(-final[finite], kind="stable")]
    for rank_index in _one_window_per_struct(addresses[order], best_first, top):
        i = order[rank_index]
        v = int(vertical[i])
        terms = {k: float(by_axis[v][k][i]) for k in ("moved", *_WEIGHTS) if not np.isnan(by_axis[v][k][i])}
        terms["speed_plausible"] = float(speed_plausibility(speed[i:i + 1])[0])
        terms["steady"] = float(steady[rank_index])
        terms["common_value"] = float(common[rank_index])
        terms["permuted"] = float(permuted[rank_index])
        terms["double_view"] = float(double_view[rank_index])
        terms["coarse_copy"] = float(coarse[rank_index])
        terms["not_float"] = float(not_float[rank_index])
        if not np.isnan(by_axis[v]["right_turn"][i]):
            terms["right_turn"] = float(by_axis[v]["right_turn"][i])
        values = cast("tuple[float, float, float]", tuple(float(x) for x in now[i]))  # a row of the triples
        ranked.append(RankedTriple(int(addresses[i]), values, v, float(final[rank_index]),
                                   float(chosen[i]), float(speed[i]), int(copies[rank_index]),
                                   float(lead[rank_index]), terms))
    return ranked


def _samples(moves: list[MoveRecord], values: np.ndarray) -> np.ndarray:
    """Every value each candidate was seen to hold, (n, samples, 3)."""
    seen = [values] + [m.before for m in moves] + [m.after for m in moves] + \
        [m.end for m in moves if m.end is not None]
    with np.errstate(invalid="ignore"):  # a value sampled mid-move may be a signalling NaN
        return np.stack([s.astype(np.float64) for s in seen], axis=1)


def _not_floats(moves: list[MoveRecord], values: np.ndarray) -> np.ndarray:
    """Per candidate: whether a slot held a nonzero value below NOT_FLOAT_BELOW in some sample."""
    with np.errstate(invalid="ignore"):
        magnitude = np.abs(_samples(moves, values))
        tiny = (magnitude > 0) & (magnitude < NOT_FLOAT_BELOW)
        return np.asarray(tiny.any(axis=(1, 2)), bool)


def _grid_steps(samples: np.ndarray) -> np.ndarray:
    """Per candidate: the coarsest binary grid (1, 1/2, ... FINEST_FIXED_POINT) every value it held lies on, or 0
    when its values need finer fractions than that (a simulated float always does)."""
    flat = samples.reshape(len(samples), -1)
    finite = np.isfinite(flat).all(axis=1)
    steps = np.zeros(len(samples))
    step = FINEST_FIXED_POINT
    with np.errstate(invalid="ignore"):
        while step <= 1.0:
            scaled = flat / step
            steps = np.where(finite & (scaled == np.round(scaled)).all(axis=1), step, steps)
            step *= 2
    return steps


def _coarse_copies(moves: list[MoveRecord], values: np.ndarray, agree: np.ndarray) -> np.ndarray:
    """Per candidate: whether every value it held lies on a fine binary grid (1/4 of a unit down to 1/256) while a
    copy moving with it, within two grid steps of it at some moment, holds finer values. Such a triple is a
    fixed-point copy of the position, not the position: Cube 2 games (Red Eclipse) send positions over the
    network in 1/16 units, and that copy, kept on the heap and on the stack, walked exactly like the player and
    outranked the player's own struct. It lags, by more than a grid step while the player moves fast (a fall),
    so they are compared where they are closest. Round coordinates with no finer copy beside them (the built-in
    world's lockstep moves) are not touched, and neither are integer grids (1 unit and coarser)."""
    samples = _samples(moves, values)
    steps = _grid_steps(samples)
    coarse = np.zeros(len(values), bool)
    finer = np.flatnonzero(steps == 0)
    for i in np.flatnonzero((steps > 0) & (steps <= COARSEST_FIXED_POINT)):
        partners = finer[agree[i, finer]]
        if len(partners) == 0:
            continue
        with np.errstate(invalid="ignore"):
            apart = np.abs(samples[partners] - samples[i][None]).max(axis=2)   # (partners, samples)
        closest = np.where(np.isnan(apart), np.inf, apart).min(axis=1)
        coarse[i] = bool((closest <= 2 * steps[i]).any())
    return coarse


def _double_views(addresses: np.ndarray, now: np.ndarray, overlap: np.ndarray) -> np.ndarray:
    """Per candidate: whether the two of its floats that share an 8-byte aligned word, read together as one
    double, hold a value another candidate holds as a float. Then the triple is a window on a double
    (float64) copy of the position, not a position: a double's high half moves with it (monotonically, at
    about a tenth of its speed), and where coordinates are round numbers its low half stays 0, so the window
    walks, returns and squares like the position. The built-in world's sound keeps its listener's poses as
    doubles, 14 rows of them, and such a window outranked the position once they were counted as copies.
    A float triple's own pairs read as doubles are far from any coordinate (-9.0 as a float, with 0.0 beside
    it, reads as a double of -262144)."""
    count = len(now)
    if count < 2:
        return np.zeros(count, bool)
    floats = np.ascontiguousarray(now, dtype=np.float32)
    low = np.where(addresses % 8 == 0, 0, 1)  # where the aligned word begins within each triple
    rows = np.arange(count)
    words = np.ascontiguousarray(np.stack([floats[rows, low], floats[rows, low + 1]], axis=1))
    doubles = words.view(np.float64)[:, 0]
    held = floats.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.abs(held[None, :, :] - doubles[:, None, None]) <= 1e-6 * np.abs(doubles)[:, None, None]
        meaningful = np.isfinite(doubles) & (np.abs(doubles) >= 1e-3) & (np.abs(doubles) <= 1e9)
    close[overlap] = False  # its own floats do not count, nor those of windows overlapping it
    return meaningful & close.any(axis=(1, 2))


def _permuted_copies(values: np.ndarray, vertical: np.ndarray, copies: np.ndarray, overlap: np.ndarray,
                     fitness: np.ndarray) -> np.ndarray:
    """Per candidate: whether its two ground values are another, better supported candidate's in the other
    order. Such a triple is the position with its axes swapped, not the game's own: a sound library's
    listener (OpenAL keeps one), or on Minetest a window straddling two structs ([z of one, 1.0, x of the
    next]) whose constant middle passes for a perfectly level height. It fits the walking protocol as well
    as the position does (the swap only mirrors it), and came within 2% of the true position's score."""
    ground = np.stack([_horizontal(values[i], int(vertical[i])) for i in range(len(values))]) \
        if len(values) else np.zeros((0, 2))
    swapped = ground[:, ::-1]

    def close(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.asarray((np.abs(a - b) <= 1e-4 * np.maximum(1.0, np.abs(a))).all(axis=-1))

    same_order = close(ground[:, None, :], ground[None, :, :])
    other_order = close(ground[:, None, :], swapped[None, :, :]) & ~same_order
    better_supported = copies[None, :] > copies[:, None]
    # A mirror walks as well as what it mirrors; a triple that merely ends on the swapped values does not (in the
    # built-in world, 15 windows (y, z, yaw) read z up, ground (y, z), stood at the position's (x, y) swapped and
    # halved it). A window overlapping it is the same floats read from another start, no copy at all.
    as_good = fitness[None, :] >= PERMUTED_FIT_SHARE * fitness[:, None]
    return np.asarray((other_order & better_supported & as_good & ~overlap).any(axis=1))


def _overlapping(addresses: np.ndarray) -> np.ndarray:
    """Pairs of triples that share a float (starting under 12 bytes apart): windows on one struct."""
    signed = addresses.astype(np.int64)
    return np.asarray(np.abs(signed[:, None] - signed[None, :]) < 12)


def first_structs(addresses: np.ndarray, by_fit: np.ndarray, structs: int, most_windows: int) -> np.ndarray:
    """Of `by_fit` (indices, best fit first), the windows of the first `structs` runs of overlapping windows to
    appear, each with every window of it that fitted at all (at most `most_windows` in all, the best fits): a
    mirrored window [z, 1.0, x] that fits better than the copies beside it must not leave them out of the pool."""
    anchors: list[int] = []  # sorted: the first window seen of each struct
    pooled: list[int] = []
    for i in by_fit.tolist():
        address = int(addresses[i])
        at = bisect.bisect_left(anchors, address)
        if any(abs(address - other) < 12 for other in anchors[max(0, at - 1):at + 1]):
            pooled.append(i)
        elif len(anchors) < structs:
            anchors.insert(at, address)
            pooled.append(i)
        if len(pooled) == most_windows:
            break
    return np.array(pooled, dtype=np.int64)


def _one_window_per_struct(addresses: np.ndarray, best_first: np.ndarray, top: int) -> np.ndarray:
    """Of `best_first` (indices into `addresses`), the best window of each run of overlapping ones, `top` at most."""
    taken: list[int] = []
    kept: list[int] = []
    for i in best_first.tolist():
        address = int(addresses[i])
        if all(abs(address - other) >= 12 for other in kept):
            taken.append(i)
            kept.append(address)
            if len(taken) == top:
                break
    return np.array(taken, dtype=np.int64)


def _directions(moves: list[MoveRecord], order: np.ndarray, vertical: np.ndarray) -> np.ndarray:
    """Each candidate's horizontal displacements over all steps, as one unit vector."""
    rows: list[np.ndarray] = []
    for move in moves:
        delta = move.after[order].astype(np.float64) - move.before[order].astype(np.float64)
        first = np.where(vertical == 1, delta[:, 0], delta[:, 0])
        second = np.where(vertical == 1, delta[:, 2], delta[:, 1])
        rows += [first, second]
    matrix = np.stack(rows, axis=1)
    return matrix / (np.linalg.norm(matrix, axis=1, keepdims=True) + _TINY)
