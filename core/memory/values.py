"""Value types and comparisons for value scans, with Cheat Engine's semantics.

First scans: an exact value, a range, or an unknown initial value (a snapshot).
Next scans: changed, unchanged, increased, decreased, increased by / decreased by (with a
tolerance), equal to, between; the change-based ones can compare against the first scan
instead of the previous one. Changed / unchanged compare the bytes, so a NaN that stays NaN
is unchanged; every other comparison is numeric, and NaN never satisfies one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Literal

import numpy as np

TypeName = Literal["f32", "f64", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64"]
TYPE_NAMES: tuple[str, ...] = ("f32", "f64", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64")
_DTYPES = {"f32": "<f4", "f64": "<f8", "i8": "i1", "u8": "u1", "i16": "<i2", "u16": "<u2", "i32": "<i4",
           "u32": "<u4", "i64": "<i8", "u64": "<u8"}
_BITS = {1: "u1", 2: "<u2", 4: "<u4", 8: "<u8"}

FirstKind = Literal["exact", "range", "unknown"]
NextOp = Literal["changed", "unchanged", "increased", "decreased", "increased_by", "decreased_by", "equal",
                 "between"]
FIRST_KINDS: tuple[str, ...] = ("exact", "range", "unknown")
NEXT_OPS: tuple[str, ...] = ("changed", "unchanged", "increased", "decreased", "increased_by", "decreased_by",
                             "equal", "between")
_RELATIVE = ("changed", "unchanged", "increased", "decreased", "increased_by", "decreased_by")


class ScanValueError(ValueError):
    """A scan value or option that makes no sense; the message says what is expected."""


@dataclass(frozen=True)
class ValueType:
    name: str
    dtype: np.dtype
    bits: np.dtype  # the unsigned type of the same size, for byte-exact comparisons

    @property
    def size(self) -> int:
        return self.dtype.itemsize

    @property
    def is_float(self) -> bool:
        return self.dtype.kind == "f"

    def parse(self, text: str | float | int) -> float | int:
        """A value typed by the user, checked against the type's range."""
        if isinstance(text, bool):
            raise ScanValueError(f"a {self.name} value must be a number, got {text!r}")
        if isinstance(text, (int, float)):
            number: float | int = text
        else:
            cleaned = str(text).strip()
            try:
                number = float(cleaned) if self.is_float else int(cleaned, 0)
            except ValueError:
                kind = "a number such as 12.5" if self.is_float else "an integer such as 42 or 0x2A"
                raise ScanValueError(f"{text!r} is not {kind} ({self.name})") from None
        if self.is_float:
            if not math.isfinite(float(number)):
                raise ScanValueError(f"{text!r}: scan for finite {self.name} values")
            return float(number)
        if isinstance(number, float):
            if not number.is_integer():
                raise ScanValueError(f"{text!r} is not a whole number, and {self.name} holds integers")
            number = int(number)
        info = np.iinfo(self.dtype)
        if not info.min <= number <= info.max:
            raise ScanValueError(f"{number} does not fit in {self.name} ({info.min} to {info.max})")
        return int(number)


def value_type(name: str) -> ValueType:
    if name not in _DTYPES:
        raise ScanValueError(f"unknown value type {name!r}; choose one of {', '.join(TYPE_NAMES)}")
    dtype = np.dtype(_DTYPES[name])
    return ValueType(name, dtype, np.dtype(_BITS[dtype.itemsize]))


def typed_tolerance(text: str | float | int) -> float:
    """Cheat Engine's "rounded" match for a typed float: half a unit of its last typed digit.
    '12.5' matches 12.45 to 12.55; '12' matches 11.5 to 12.5."""
    if not isinstance(text, str):
        return 0.0
    try:
        exponent = Decimal(text.strip()).as_tuple().exponent
    except InvalidOperation:
        return 0.0
    if not isinstance(exponent, int):
        return 0.0
    return 0.5 * 10.0 ** exponent


@dataclass(frozen=True)
class Condition:
    """One first or next scan: what to compare, and with what."""

    op: str                         # a FirstKind or a NextOp
    value: float | int | None = None
    upper: float | int | None = None
    tolerance: float = 0.0
    against_first: bool = False

    def describe(self) -> str:
        parts = [self.op]
        if self.value is not None:
            parts.append(str(self.value))
        if self.upper is not None:
            parts.append(f"to {self.upper}")
        if self.tolerance:
            parts.append(f"±{self.tolerance:g}")
        if self.against_first:
            parts.append("(against the first scan)")
        return " ".join(parts)

    @property
    def needs_previous(self) -> bool:
        return self.op in _RELATIVE


def check_condition(condition: Condition, first: bool) -> None:
    ops = FIRST_KINDS if first else NEXT_OPS
    if condition.op not in ops:
        raise ScanValueError(f"unknown {'first' if first else 'next'} scan {condition.op!r}; choose one of "
                          f"{', '.join(ops)}")
    if condition.op in ("exact", "equal", "increased_by", "decreased_by") and condition.value is None:
        raise ScanValueError(f"a {condition.op!r} scan needs a value")
    if condition.op in ("range", "between"):
        if condition.value is None or condition.upper is None:
            raise ScanValueError(f"a {condition.op!r} scan needs a lower and an upper value")
        if condition.value > condition.upper:
            raise ScanValueError(f"the range {condition.value} to {condition.upper} is empty: the lower bound comes "
                              "first")
    if condition.tolerance < 0 or not math.isfinite(condition.tolerance):
        raise ScanValueError(f"a tolerance must be a finite number of at least 0, got {condition.tolerance}")
    if condition.against_first and condition.op not in _RELATIVE:
        raise ScanValueError(f"'against the first scan' applies to changes ({', '.join(_RELATIVE)}), "
                          f"not to {condition.op!r}")


def evaluate(condition: Condition, vtype: ValueType, current: np.ndarray,
             previous: np.ndarray | None = None) -> np.ndarray:
    """A boolean array: which `current` values satisfy the condition (against `previous`)."""
    with np.errstate(invalid="ignore", over="ignore"):  # NaN and inf in raw memory are normal
        return _evaluate(condition, vtype, current, previous)


def _evaluate(condition: Condition, vtype: ValueType, current: np.ndarray,
              previous: np.ndarray | None) -> np.ndarray:
    op = condition.op
    if op == "unknown":
        return np.ones(current.shape, dtype=bool)
    if op in ("changed", "unchanged"):
        assert previous is not None
        same = current.view(vtype.bits) == previous.view(vtype.bits)
        return same if op == "unchanged" else ~same
    if op in ("exact", "equal", "range", "between"):
        assert condition.value is not None  # check_condition made sure, as for upper below
        if op in ("exact", "equal"):
            low = condition.value - condition.tolerance
            high = condition.value + condition.tolerance
        else:
            assert condition.upper is not None
            low, high = condition.value, condition.upper
        if not vtype.is_float and low == high:
            return current == low
        lo, hi = _native_bounds(vtype, low, high)
        return (current >= lo) & (current <= hi)
    assert previous is not None
    if op == "increased":
        return current > previous
    if op == "decreased":
        return current < previous
    assert condition.value is not None  # increased_by or decreased_by: check_condition made sure
    amount = condition.value if op == "increased_by" else -condition.value
    if not vtype.is_float and condition.tolerance == 0:
        # Exact, in modular 64-bit arithmetic, so no width or signedness loses precision.
        delta = current.astype(np.uint64) - previous.astype(np.uint64)
        return delta == np.uint64(int(amount) % (1 << 64))
    delta = current.astype(np.float64) - previous.astype(np.float64)
    return np.abs(delta - amount) <= condition.tolerance


def _native_bounds(vtype: ValueType, low: float | int, high: float | int) -> tuple[np.generic, np.generic]:
    """[low, high] in the scanned type, widened by rounding so that comparing in that type (fast,
    no copies) keeps exactly the values that comparing in float64 would."""
    if vtype.is_float:
        low, high = float(low), float(high)
        lo, hi = vtype.dtype.type(low), vtype.dtype.type(high)
        if float(lo) > low:
            lo = np.nextafter(lo, vtype.dtype.type(-np.inf))
        if float(hi) < high:
            hi = np.nextafter(hi, vtype.dtype.type(np.inf))
        return lo, hi
    info = np.iinfo(vtype.dtype)
    lo_int = max(info.min, low if isinstance(low, int) else math.ceil(low))
    hi_int = min(info.max, high if isinstance(high, int) else math.floor(high))
    if lo_int > hi_int:  # nothing fits: an empty range that numpy can still compare against
        return vtype.dtype.type(info.max), vtype.dtype.type(info.min)
    return vtype.dtype.type(lo_int), vtype.dtype.type(hi_int)
