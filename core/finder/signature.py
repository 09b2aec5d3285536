"""Building an AOB signature around a found value that survives a restart of the game.

A window of bytes around the value is read in several movement states (at rest and mid-move) of
at least two game processes. A byte stays literal only if it was the same in every one of them and is not:
  the value itself (or another field the profile reads, such as flags);
  part of a pointer-like qword (it points into the process's mappings, or looks like a user
  address): heap and module addresses move between runs;
  equal in every process to a byte of that process's heap addresses (a stray piece of a pointer);
  in an aligned 4-byte word whose other bytes differed (a varying field: its same bytes are coincidences);
and "weak" bytes are kept out of the pattern unless it cannot be unique without them: zeros, 0xFF,
the 0x7FFF of a 16-bit maximum and the sign byte of a float -0.0. Those are the values of fields not
set yet (a flag word before any quest, a timer before it starts, a node position initialised to
32767), which flip in some runs: on Minetest a window of such sentinels next to the player's position
matched in 2 of 5 fresh processes, and a float that is -0.0 in most launches is +0.0 in about one in six.

However careful, a handful of processes cannot show every byte that varies between launches, so
a pattern with enough literal bytes allows some of them to differ (`tolerance_for`: one per 8
literal bytes, at most 2; core/memory/tolerant.py), and is chosen only if every other place in every
build process differs from it in more than that many bytes plus MARGIN (unique is not enough: an object
near the player, one byte away, matches in some launch).

Of the sub-windows that start and end on a literal byte, the one chosen is unique in every
process it was built from (checked in saved images of their memory, core/memory/image.py) and
scores best on literal bytes, a long literal run for the scanner's memmem anchor, shortness and
closeness to the value.

Where the value lives in many copies of one struct (a snapshot ring, interpolation copies), every
window inside the struct matches every copy. The window then widens (`REACHES`): a pattern further
from the value, in the object around the game's own copy (a header, a footer), can be unique where
nothing inside the struct is (core/finder/copies.py tries each reach in turn, keeping to windows that
tell the game's own copy apart from the others).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from core.finder.motion import Drivable, MotionPlan
from core.game.pad import PadState
from core.memory.image import MemoryImage
from core.memory.pattern import Pattern, parse_pattern
from core.memory.readers import MemoryReader
from core.memory.regions import Region
from core.memory.scanner import RegionFilter, scan
from core.memory.tolerant import literal_count, searchable_tolerance

BEFORE = 96
AFTER = 96
REACHES = (96, 384, 1024)   # bytes either way of the value a pattern may come from, tried in turn
VALUE_BYTES = 12
MIN_LITERALS = 8
MIN_NONZERO = 6
MAX_LENGTH = 96
MAX_TOLERANCE = 2
TOLERANT_TRIES = 8   # patterns unique but short of their clearance (each a tolerant scan per process) per choose
# Literal bytes beyond its tolerance by which every other place in each build process must differ from a pattern.
# Unique is not enough: on Minetest a pattern unique with 2 bytes differing had 3 to 21 places within 3, and one
# fresh launch in 13 had 4 exact matches (another object near the player, the same floats 1.0 and -1.0 beside it).
MARGIN = 2


@dataclass
class Observation:
    """One game process: where the value was, its surroundings in several states, its memory."""

    pid: int
    address: int                   # the value (triple start)
    low: int                       # window = [address + low, address + high), up to REACHES[-1] either way
    high: int
    windows: list[bytes]
    maps: list[tuple[int, int]]    # mapped ranges, for telling pointers apart
    image: MemoryImage | None = None

    def bytes_at(self, relative: int) -> np.ndarray:
        """Byte `relative` to the value in every window (uint8 array)."""
        return np.array([w[relative - self.low] for w in self.windows], dtype=np.uint8)


def _window_bounds(regions: list[Region], address: int) -> tuple[int, int]:
    reach = REACHES[-1]
    for region in regions:
        if region.start <= address < region.end:
            low = max(region.start, address - reach) - address
            high = min(region.end, address + VALUE_BYTES + reach) - address
            return low, high
    raise LookupError(f"address {address:#x} is not in any mapped region of the game any more")


def observation_steps(plan: MotionPlan) -> list[tuple[PadState, float]]:
    """Moves between window reads: walking, strafing, turning and tilting the camera."""
    move, turn = plan.move_seconds, plan.turn_seconds
    return [(PadState(left_y=1.0), move), (PadState(right_x=1.0), turn), (PadState(left_x=1.0), move),
            (PadState(right_y=0.6), turn), (PadState(left_y=-1.0), move), (PadState(right_y=-0.6), turn),
            (PadState(left_x=-1.0), move)]


def observe(game: Drivable, reader: MemoryReader, address: int, plan: MotionPlan,
            image: bool = True, region_filter: RegionFilter | None = None) -> Observation:
    regions = reader.regions()
    low, high = _window_bounds(regions, address)
    windows = [reader.read(address + low, high - low)]
    for pad, seconds in observation_steps(plan):
        # Read once in motion too: a speed or animation field is the same at rest in every process
        # (zero) and would pass as literal, then break the pattern the moment the player walks.
        game.hold(pad, seconds / 2)
        windows.append(reader.read(address + low, high - low))
        game.hold(pad, seconds / 2)
        game.hold(PadState(), plan.settle_seconds)
        windows.append(reader.read(address + low, high - low))
    size = min(len(w) for w in windows)
    windows = [w[:size] for w in windows]
    captured = MemoryImage.capture(reader, region_filter=region_filter) if image else None
    maps = sorted((r.start, r.end) for r in regions)
    return Observation(reader.pid, address, low, low + size, windows, maps, captured)


def _pointer_like(value: int, maps: list[tuple[int, int]], starts: np.ndarray) -> bool:
    if not 0x10000 <= value <= 0x7FFF_FFFF_FFFF:
        return False
    index = int(np.searchsorted(starts, value, side="right")) - 1
    if index >= 0 and maps[index][0] <= value < maps[index][1]:
        return True
    return value >= 1 << 40  # high user-space addresses (heaps, stacks, libraries) even if unmapped now


@dataclass
class WindowModel:
    """What is known about each byte around the value, relative to it."""

    low: int
    high: int
    values: np.ndarray      # byte values (from the first window)
    literal: np.ndarray     # bool: same everywhere and not excluded
    reasons: dict[str, int] = field(default_factory=dict[str, int])  # why bytes were wildcarded, for the report

    def index(self, relative: int) -> int:
        return relative - self.low


def derive(observations: list[Observation], exclude: list[tuple[int, int]] | None = None,
           reach: int = BEFORE) -> WindowModel:
    """Combine the observations, up to `reach` bytes either way of the value: a byte is literal only if it is
    identical in all of them."""
    low = max(-reach, *(o.low for o in observations))
    high = min(VALUE_BYTES + reach, *(o.high for o in observations))
    length = high - low
    stack = np.concatenate([np.stack([np.frombuffer(w, np.uint8)[low - o.low:high - o.low] for w in o.windows])
                            for o in observations])
    same = (stack == stack[0]).all(axis=0)
    literal = same.copy()
    reasons = {"differed": int((~same).sum())}
    excluded = [(0, VALUE_BYTES), *(exclude or [])]
    value_mask = np.zeros(length, bool)
    for start, end in excluded:
        value_mask[max(0, start - low):max(0, min(length, end - low))] = True
    literal &= ~value_mask
    pointer_mask = np.zeros(length, bool)
    for o in observations:
        starts = np.array([a for a, _ in o.maps], dtype=np.uint64)
        # Qwords are judged whole, in the observation's wider window: a pointer straddling either end of the model's
        # range would otherwise leave its low bytes literal (the same in one process, a pointer's all the same).
        first = (low - o.low) - ((o.address + low) % 8)
        for window in o.windows:
            data = np.frombuffer(window, np.uint8)
            for i in range(first, high - o.low, 8):
                if i < 0 or i + 8 > len(data):
                    continue
                if _pointer_like(int.from_bytes(data[i:i + 8].tobytes(), "little"), o.maps, starts):
                    at = i - (low - o.low)
                    pointer_mask[max(0, at):max(0, min(length, at + 8))] = True
    reasons["pointer-like"] = int((pointer_mask & same & ~value_mask).sum())
    # A field that varied at all varies between launches in ways a few processes do not show: its bytes that
    # stayed the same did so by the values seen (the high byte of a float near the player's coordinates, the zero
    # high bytes of a counter). On Minetest a pattern of such high bytes (C0 .. 40 .. 41 .. 40, 155 bytes from the
    # position) matched nowhere in the next fresh process, twice. Every aligned 4-byte word with a byte that
    # differed is left out whole.
    word_mask = np.zeros(length, bool)
    first_word = (-(observations[0].address + low)) % 4
    for i in range(first_word, length - 3, 4):
        if not same[i:i + 4].all():
            word_mask[i:i + 4] = True
    reasons["varying word"] = int((word_mask & same & ~value_mask & ~pointer_mask).sum())
    literal &= ~word_mask
    # A byte equal, in every process, to a byte of that process's own heap addresses (bits 32..47 of the
    # value's address) is most likely a stray piece of a pointer (padding left over from freed memory):
    # it agrees in the build processes only because their heaps happened to share a prefix. On Minetest
    # such a byte next to the position was 0x56 or 0x55 with the heap's prefix, and a pattern keeping it
    # failed in 9 of 12 fresh launches.
    fragment = np.ones(length, bool)
    for o in observations:
        fragment &= np.isin(stack[0], [(o.address >> 40) & 0xFF, (o.address >> 32) & 0xFF])
    reasons["address fragment"] = int((fragment & same & ~value_mask & ~pointer_mask).sum())
    literal &= ~fragment
    reasons["value and read fields"] = int(value_mask.sum())
    literal &= ~pointer_mask
    return WindowModel(low, high, stack[0].copy(), literal, reasons)


@dataclass(frozen=True)
class Pick:
    """A chosen signature: the pattern, and where it starts relative to the value."""

    pattern: Pattern
    start: int            # pattern start relative to the value (negative: before it)
    literals: int
    anchor: int
    score: float
    tolerance: int = 0    # literal bytes allowed to differ (the profile's max_mismatches)
    # literal bytes beyond `tolerance` by which every other place in the build processes differed from it, or more
    margin: int = 0

    @property
    def end(self) -> int:
        return self.start + len(self.pattern)


def pattern_text(values: np.ndarray, literal: np.ndarray) -> str:
    return " ".join(f"{v:02X}" if keep else "??" for v, keep in zip(values.tolist(), literal.tolist()))


def weak_bytes(values: np.ndarray) -> np.ndarray:
    """Bytes that look like an unset field's value: 0x00, 0xFF, the 0x7F of a little-endian 0x7FFF, and the
    0x80 that ends a float -0.0 (00 00 00 80): a zero whose sign depends on how it was computed."""
    weak = (values == 0) | (values == 0xFF)
    weak[1:] |= (values[1:] == 0x7F) & (values[:-1] == 0xFF)
    weak[3:] |= (values[3:] == 0x80) & (values[2:-1] == 0) & (values[1:-2] == 0) & (values[:-3] == 0)
    return weak


def tolerance_for(pattern: Pattern) -> int:
    """Literal bytes a built pattern may allow to differ: one per 8, at most MAX_TOLERANCE, and no more than it can
    be searched with cheaply (the evaluator scans with it at every lock)."""
    return searchable_tolerance(pattern, min(MAX_TOLERANCE, literal_count(pattern) // 8))


def candidate_windows(model: WindowModel, allow_zero: bool, inner: int | None = None,
                      apart: np.ndarray | None = None) -> list[tuple[float, int, int, np.ndarray]]:
    """Sub-windows worth trying, best first; `allow_zero`: weak bytes (weak_bytes) may be literals; `inner`: leave
    out those lying wholly within `inner` bytes of the value (tried already, at a narrower reach); `apart`: one
    row per other copy of the value's struct, True where its bytes differ from the value's (as the model's
    bytes): keep only windows holding, for every copy, a literal byte that differs there."""
    strong = ~weak_bytes(model.values)
    literal = model.literal & (True if allow_zero else strong)
    shortest = _shortest_ends(literal, apart)
    nonzero_byte = strong.tolist()
    keep = literal.tolist()
    found: list[tuple[float, int, int, np.ndarray]] = []
    for a in np.flatnonzero(literal).tolist():
        if shortest[a] >= min(a + MAX_LENGTH, len(keep)):
            continue  # no window from here reaches a byte that tells some copy apart
        literals = nonzero = run = best = 0
        for j in range(a, min(a + MAX_LENGTH, len(keep))):
            if keep[j]:
                literals += 1
                nonzero += nonzero_byte[j]
                run += 1
                best = max(best, run)
            else:
                run = 0
                continue
            if literals < MIN_LITERALS or nonzero < MIN_NONZERO or j < shortest[a]:
                continue
            start, end = a + model.low, j + 1 + model.low
            if inner is not None and start >= -inner and end <= VALUE_BYTES + inner:
                continue
            distance = max(0, start - VALUE_BYTES, -end)
            score = literals + 0.6 * nonzero + 1.5 * min(best, 8) - 0.35 * (j + 1 - a) - 0.1 * distance
            found.append((score, a, j + 1, literal[a:j + 1]))
    found.sort(key=lambda item: -item[0])
    return found


def _shortest_ends(literal: np.ndarray, apart: np.ndarray | None) -> list[int]:
    """Per start index: the last index a window must reach to hold a differing literal byte of every copy in
    `apart` (past the end: none can)."""
    length = len(literal)
    if apart is None or len(apart) == 0:
        return [0] * length
    telling = apart & literal
    index = np.where(telling, np.arange(length), length)
    # next_true[c, i]: the first index >= i where copy c differs on a literal byte
    next_true = np.minimum.accumulate(index[:, ::-1], axis=1)[:, ::-1]
    return next_true.max(axis=0).tolist()


def choose(model: WindowModel, observations: list[Observation], tries: int = 40,
           inner: int | None = None, apart: np.ndarray | None = None, weak: bool = True, margin: int = MARGIN,
           clearances: Clearances | None = None) -> Pick | None:
    """The best-scoring pattern that is unique, and where expected, in every observed process, and clear of every
    other place there by `margin` literal bytes beyond the tolerance it is given (its own, `tolerance_for`, or less
    where the clearance is short of it; a pattern clear of nothing by `margin` is not chosen). `weak`: patterns
    with weak bytes are tried when none without is chosen. `inner`, `apart`: see candidate_windows.
    `clearances`: what earlier calls measured, to be reused and added to.

    The cost is the tolerant scans: after TOLERANT_TRIES patterns that were unique but short of their clearance,
    the best settled for (or none) is the answer."""
    seen: set[str] = set()
    settled: Pick | None = None  # the best pick whose clearance allows less than its own tolerance
    short = 0                    # patterns unique exactly but short of the clearance they wanted
    clearances = Clearances() if clearances is None else clearances
    for allow_zero in (False, True) if weak else (False,):
        tried = 0  # each pass has its own budget: weak bytes get their chance when strong ones are not enough
        for score, a, b, mask in candidate_windows(model, allow_zero, inner, apart)[:tries * 4]:
            text = pattern_text(model.values[a:b], mask)
            if text in seen:
                continue
            seen.add(text)
            pattern = parse_pattern(text)
            wanted = tolerance_for(pattern)
            if settled is not None and wanted <= settled.tolerance:
                continue  # only a pattern that may allow more changed bytes can beat the one settled for
            tried += 1
            start = a + model.low
            target = searchable_tolerance(pattern, wanted + margin)
            level = clearances.measure(pattern, observations, start, target)
            allowed = min(wanted, level - margin)
            if allowed == wanted:
                return Pick(pattern, start, int(mask.sum()), len(pattern.anchor), score, allowed, level - allowed)
            if level >= 0:
                short += 1
            if allowed >= 0 and (settled is None or allowed > settled.tolerance):
                settled = Pick(pattern, start, int(mask.sum()), len(pattern.anchor), score, allowed, level - allowed)
            if tried >= tries or short >= TOLERANT_TRIES:
                break
        if settled is not None or short >= TOLERANT_TRIES:
            break  # weak bytes are tried only when no pattern without them was chosen
    return settled


class Clearances:
    """Each pattern's clearance (by pattern and start), measured up to the highest target asked so far: a level
    measured up to one target answers any lower one."""

    def __init__(self) -> None:
        self._measured: dict[tuple[int, str], tuple[int, int]] = {}   # -> (target, level)

    def measure(self, pattern: Pattern, observations: list[Observation], start: int, target: int) -> int:
        key = (start, pattern.text)
        known = self._measured.get(key)
        if known is None or known[0] < target:
            known = (target, clearance(pattern, observations, start, target))
            self._measured[key] = known
        return min(known[1], target)


def clearance(pattern: Pattern, observations: list[Observation], start: int, target: int) -> int:
    """The most literal bytes (up to `target`) that may differ with `pattern` still matching only at the value's
    place in every observed process; -1 where it is not even unique exactly there.

    An exact scan of each process first (memmem on the pattern's longest run: cheap, and most candidates stop
    there), then one tolerant scan at `target`: every match carries how many literal bytes differed, so the
    nearest other place gives the level without a scan per level."""
    # Without an image, uniqueness is checked live, later.
    imaged = [(o.image, o.address + start) for o in observations if o.image is not None]
    for image, expected in imaged:
        if _places(pattern, image, 0) != {expected: 0}:
            return -1
    level = target
    for image, expected in imaged if target > 0 else []:
        places = _places(pattern, image, target)
        places.pop(expected, None)
        level = min(level, min(places.values(), default=target + 1) - 1)
    return level


def _places(pattern: Pattern, image: MemoryImage, tolerance: int) -> dict[int, int]:
    """Address -> literal bytes that differed, of every place in `image` matching `pattern` with at most
    `tolerance` of them differing."""
    matches = scan(image, pattern, RegionFilter(perms="rw"), tolerance=tolerance)
    return {match.address: match.mismatches for match in matches}
