"""Tolerant signatures: a block whose signature differs in a byte or two is found only when the profile
allows it, exact matches always win, and the pigeonhole search finds exactly what a brute force finds."""

from __future__ import annotations

import random

import pytest

from core.evaluation.locate import candidates
from core.evaluation.profile import BlockInvalid, Signature
from core.memory.bench_target import block
from core.memory.pattern import Pattern, parse_pattern
from core.memory.readers import LinuxReader
from core.memory.scanner import RegionFilter, scan
from core.memory.tolerant import MIN_PART_ANCHOR, find_tolerant, mismatches_at, searchable_tolerance, split_parts
from tests.core.memory.test_memory_scan import SIGNATURE, planted


def with_tolerance(profile, tolerance: int):
    assert profile.signature is not None
    signature = Signature(pattern=profile.signature.pattern, base_offset=profile.signature.base_offset,
                          max_mismatches=tolerance)
    return profile.model_copy(update={"signature": signature})


def test_a_block_with_one_changed_signature_byte_is_found_only_with_a_tolerance_and_says_so():
    with planted("--altered", "--size", str(4 << 20)) as info:
        reader = LinuxReader(info["pid"])
        region = RegionFilter(perms="rw", min_size=info["size"], max_size=info["size"])
        pattern = parse_pattern(SIGNATURE)
        for chunk in (4096, 1 << 20):  # page-sized chunks: blocks straddle chunk boundaries
            assert scan(reader, pattern, region, chunk_size=chunk) == []
            one = scan(reader, pattern, region, chunk_size=chunk, tolerance=1)
            assert sorted((m.address, m.mismatches) for m in one) == sorted((a, 1) for a in info["one"])
            two = scan(reader, pattern, region, chunk_size=chunk, tolerance=2)
            assert sorted((m.address, m.mismatches) for m in two) == sorted(
                [(a, 1) for a in info["one"]] + [(a, 2) for a in info["two"]])


def test_the_evaluator_locks_on_a_changed_block_only_within_max_mismatches(builtin_profile):
    with planted("--altered", "--size", str(4 << 20)) as info:
        reader = LinuxReader(info["pid"])
        assert candidates(reader, builtin_profile) == []  # an exact profile stays exact
        found = candidates(reader, with_tolerance(builtin_profile, 1))
        assert sorted(b.address for b in found) == sorted(info["one"])
        assert all(b.mismatches == 1 and b.values["tick"] == 7 for b in found)


def test_exact_matches_win_over_tolerated_ones(builtin_profile):
    with planted("--mode", "anon", "--size", str(4 << 20), "--count", "2") as info:
        reader = LinuxReader(info["pid"])
        found = candidates(reader, with_tolerance(builtin_profile, 2))
        assert sorted(b.address for b in found) == sorted(info["planted"])  # decoys fail their checksum
        assert all(b.mismatches == 0 for b in found)


def test_reading_a_locked_block_accepts_changed_bytes_up_to_the_profile_s_tolerance(builtin_profile):
    raw = block(1.0, 2.0, 3, changed=1)
    with pytest.raises(BlockInvalid, match="signature no longer present"):
        builtin_profile.decode(raw)
    assert with_tolerance(builtin_profile, 1).decode(raw)["x"] == 1.0
    with pytest.raises(BlockInvalid, match="signature no longer present"):
        with_tolerance(builtin_profile, 1).decode(block(1.0, 2.0, 3, changed=2))


def test_a_profile_may_not_tolerate_more_than_a_quarter_of_its_literal_bytes():
    with pytest.raises(ValueError, match="max_mismatches 3 is too many for this pattern: at most 2"):
        Signature(pattern=SIGNATURE, max_mismatches=3)
    with pytest.raises(ValueError, match="greater than or equal to 0"):
        Signature(pattern=SIGNATURE, max_mismatches=-1)


def brute_force(pattern: Pattern, tolerance: int, data: bytes) -> list[tuple[int, int]]:
    found = []
    for start in range(len(data) - len(pattern) + 1):
        wrong = mismatches_at(pattern, data, start)
        if wrong is not None and wrong <= tolerance:
            found.append((start, wrong))
    return found


def test_the_pigeonhole_search_finds_exactly_what_a_brute_force_finds():
    rng = random.Random(7)
    for trial in range(200):
        length = rng.randrange(8, 40)
        tokens = [rng.choice(["??", f"{rng.randrange(4):02X}", f"{rng.randrange(256):02X}", "0?", "?1"])
                  for _ in range(length)]
        tokens[0], tokens[-1] = f"{rng.randrange(1, 4):02X}", f"{rng.randrange(1, 4):02X}"
        pattern = parse_pattern(" ".join(tokens))
        literals = sum(1 for m in pattern.masks if m)
        tolerance = rng.randrange(0, literals // 4 + 1)
        # A small alphabet so that near-matches are common; the pattern planted with a few bytes changed.
        data = bytearray(rng.randrange(4) for _ in range(3000))
        for _ in range(5):
            at = rng.randrange(0, len(data) - length)
            data[at:at + length] = pattern.values
            for _ in range(rng.randrange(0, tolerance + 2)):
                data[at + rng.randrange(length)] = rng.randrange(256)
        parts = split_parts(pattern, tolerance)
        covered = sorted(part.offset + i for part in parts for i, m in enumerate(part.pattern.masks) if m)
        assert covered == [i for i, m in enumerate(pattern.masks) if m], pattern.text  # each literal once
        assert find_tolerant(pattern, tolerance, parts, data) == brute_force(pattern, tolerance, bytes(data)), (
            trial, pattern.text, tolerance)


def test_a_tolerance_is_searchable_only_where_every_part_keeps_a_three_byte_anchor():
    # Each of the k + 1 parts is found by memmem on its anchor. A part of zeros alone (or a one-byte anchor) hits
    # nearly everywhere in zeroed memory: on Minetest one scan of a 300 MB image at 4 mismatches so took minutes.
    cases = {
        " ".join(["AB"] * 40): 3,                                   # one long run: halved into parts, each long
        "11 22 33 ?? 00 00 00 00 00 00 00 00 ?? 44 55 66": 1,       # two runs with anchors, one of zeros
        "FF 7F FF 7F 00 00 00 00 00 00 00 00 ?? 03 00 00 00 00 00 00 00 00": 0,
        "11 22 33 ?? 44 55 66 ?? 77 88 99 ?? 0A 0B 0C ?? 01 ?? 02": 3,
    }
    for text, expected in cases.items():
        pattern = parse_pattern(text)
        searchable = searchable_tolerance(pattern, 3)
        assert searchable == expected, text
        # What it promises is what the search does: every part of that split has a long anchor.
        assert all(len(part.pattern.anchor) >= MIN_PART_ANCHOR for part in split_parts(pattern, searchable)) \
            or searchable == 0, text
    assert searchable_tolerance(parse_pattern(" ".join(["AB"] * 40)), 1) == 1  # never above what is asked
