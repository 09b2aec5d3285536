"""AOB pattern syntax: every token form, clear errors that point at the token, and property checks."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.memory.pattern import PatternError, parse_pattern
from core.memory.search import find_all, native_search_available


@pytest.mark.parametrize(("text", "values", "masks"), [
    ("48 8B 05", b"\x48\x8b\x05", b"\xff\xff\xff"),
    ("48 ?? 05", b"\x48\x00\x05", b"\xff\x00\xff"),
    ("48 ? 05", b"\x48\x00\x05", b"\xff\x00\xff"),
    ("4? 8B", b"\x40\x8b", b"\xf0\xff"),
    ("?A 8b", b"\x0a\x8b", b"\x0f\xff"),
    ("  de   AD\tbe\nEF ", b"\xde\xad\xbe\xef", b"\xff\xff\xff\xff"),
])
def test_token_forms(text, values, masks):
    pattern = parse_pattern(text)
    assert (pattern.values, pattern.masks) == (values, masks)


def test_the_anchor_is_the_longest_literal_run():
    pattern = parse_pattern("?? 11 ?? 22 33 44 4? 55 66")
    assert (pattern.anchor, pattern.anchor_offset) == (b"\x22\x33\x44", 3)


def test_a_run_of_zeros_is_not_the_anchor_however_long():
    """Zeroed memory is everywhere: anchoring on zeros would make a scan crawl (memmem hits every byte)."""
    pattern = parse_pattern("00 00 00 00 00 00 00 00 ?? 4B 47 00 ?? 01")
    assert (pattern.anchor, pattern.anchor_offset) == (b"\x4b\x47", 9)
    inner = parse_pattern("00 00 50 4B 00 47 5A 11 00 ?? 01")  # zeros split runs: memmem crawls on them
    assert (inner.anchor, inner.anchor_offset) == (b"\x47\x5a\x11", 5)
    zeros = parse_pattern("00 00 ?? 00")
    assert (zeros.anchor, zeros.anchor_offset) == (b"\x00\x00", 0)


@pytest.mark.parametrize(("text", "message"), [
    ("", "the pattern is empty"),
    ("48 8G", "token 2 ('8G') is not a byte"),
    ("48 123", "token 2 ('123') is not a byte: separate bytes with spaces"),
    ("488B", "token 1 ('488B') is not a byte: separate bytes with spaces"),
    ("48 5", "token 2 ('5') has one hex digit; write it as two, e.g. '05'"),
    ("?? ??", "it is all wildcards"),
    ("48 *", "token 2 ('*') is not a byte"),
])
def test_malformed_patterns_point_at_the_offending_token(text, message):
    with pytest.raises(PatternError, match=re.escape(message)):
        parse_pattern(text)


def test_a_non_text_pattern_is_refused():
    with pytest.raises(PatternError, match="must be text"):
        parse_pattern(b"\x48")  # type: ignore[arg-type]


@pytest.mark.parametrize("native", [True, False], ids=["memmem", "portable"])
def test_overlapping_and_masked_matches_are_all_found(native):
    def find(text: str, data: bytes) -> list[int]:
        return find_all(parse_pattern(text), bytearray(data), native=native)

    assert find("AA AA", b"\xaa\xaa\xaa\x00\xaa\xaa") == [0, 1, 4]
    assert find("?? 4? 00", b"\x01\x41\x00\x02\x4f\x00\x03\x51\x00") == [0, 3]
    assert find("4? ?1", bytes([0x40, 0x11, 0x50, 0x11, 0x4F, 0xF1])) == [0, 4]


def test_the_search_runs_outside_the_gil_on_linux():
    assert native_search_available()


@pytest.mark.parametrize("native", [True, False], ids=["memmem", "portable"])
def test_a_very_common_anchor_switches_to_the_vectorised_search_and_misses_nothing(native):
    data = bytearray(200_000)  # zeroed, as much real memory is: the anchor "00" is everywhere
    for position in range(0, len(data) - 3, 997):
        data[position + 1:position + 3] = b"\x7f\x01"
    found = find_all(parse_pattern("?? 7F 01 00"), data, native=native)
    assert found == [p for p in range(0, len(data) - 3, 997)]
    zero_runs = find_all(parse_pattern("00 00 ?? 00"), data, native=native, limit=5000)
    assert zero_runs == [i for i in range(len(data) - 3) if data[i] == data[i + 1] == data[i + 3] == 0][:5000]


def _token(byte: int, mask: int) -> str:
    high = f"{byte >> 4:X}" if mask & 0xF0 else "?"
    low = f"{byte & 0xF:X}" if mask & 0x0F else "?"
    return "??" if mask == 0 else high + low


@st.composite
def pattern_and_haystack(draw):
    length = draw(st.integers(1, 8))
    values = draw(st.lists(st.integers(0, 255), min_size=length, max_size=length))
    masks = draw(st.lists(st.sampled_from([0x00, 0x0F, 0xF0, 0xFF]), min_size=length, max_size=length))
    if not any(masks):
        masks[0] = 0xFF
    haystack = draw(st.binary(max_size=200))
    return " ".join(_token(v & m, m) for v, m in zip(values, masks)), haystack


@given(pattern_and_haystack(), st.booleans())
def test_find_all_agrees_with_a_brute_force_scan(case, native):
    text, haystack = case
    pattern = parse_pattern(text)
    expected = [i for i in range(len(haystack) - len(pattern) + 1)
                if all(haystack[i + j] & m == v for j, (v, m) in enumerate(zip(pattern.values, pattern.masks)))]
    assert find_all(pattern, bytearray(haystack), native=native) == expected
    assert find_all(pattern, haystack) == expected


@given(st.text(max_size=40))
def test_any_text_parses_or_raises_a_pattern_error(text):
    try:
        pattern = parse_pattern(text)
    except PatternError as exc:
        assert "pattern" in str(exc)
    else:
        assert len(pattern) == len(text.split()) and any(pattern.masks)


@pytest.mark.parametrize("native", [False, True])
def test_a_literal_zero_byte_outside_the_anchor_is_still_checked(native):
    """'00 02' is anchored on its 02 alone (a zero byte is a poor anchor): b'01 02' must not match (found by the
    brute-force comparison above in a CI run)."""
    pattern = parse_pattern("00 02")
    assert pattern.anchor == b"\x02"
    assert find_all(pattern, bytearray(b"\x01\x02\x00\x02"), native=native) == [2]
    assert find_all(pattern, b"\x01\x02") == []
