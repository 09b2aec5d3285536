"""Which bytes around a found value a signature may keep, and how clear of other places it must be: hand-made
windows from two "processes", with the byte kinds and near copies that broke found Minetest profiles in fresh
launches."""

from __future__ import annotations

import json

import numpy as np

from core.finder.build import choose_from_subsets
from core.finder.copies import choose_widening
from core.finder.signature import MARGIN, Observation, choose, derive, tolerance_for, weak_bytes
from core.memory.image import MemoryImage
from core.memory.pattern import parse_pattern
from core.memory.scanner import RegionFilter, scan

LOW = -16


def observation(address: int, before: bytes) -> Observation:
    """A value at `address` with 16 bytes before it (`before`) and its own 12 bytes, the same in two states."""
    window = before + bytes(range(1, 13))
    return Observation(pid=address & 0xFFFF, address=address, low=LOW, high=LOW + len(window),
                       windows=[window, window], maps=[])


def literal_before(model) -> list[bool]:
    return model.literal[:16].tolist()


def test_a_byte_that_tracks_each_process_s_heap_prefix_is_a_wildcard_even_when_two_processes_agree():
    # Bytes 0..3 structure (the same everywhere); byte 4 is 0x56 in both processes, whose heaps both start 0x56..:
    # a stray pointer byte. In a process whose heap starts 0x55.. it reads 0x55 (seen on Minetest, 9 of 12 launches).
    before = bytes([0x11, 0x22, 0x33, 0x44, 0x56, 0x21, 0x43, 0x65]) + bytes([0x31] * 8)
    model = derive([observation(0x5612_3456_7000, before), observation(0x5698_0ABC_D000, before)])
    literal = literal_before(model)
    assert literal[:4] == [True] * 4 and literal[5:8] == [True] * 3
    assert literal[4] is False and model.reasons["address fragment"] >= 1
    # The same byte is kept where it cannot be a piece of these processes' addresses.
    model = derive([observation(0x5512_3456_7000, before), observation(0x5598_0ABC_D000, before)])
    assert literal_before(model)[4] is True


def test_the_sign_byte_of_a_float_minus_zero_is_weak_like_an_unset_field():
    values = np.array([0x00, 0x00, 0x00, 0x80, 0x01, 0x12, 0x00, 0x80, 0xFF, 0x7F, 0x41], dtype=np.uint8)
    assert weak_bytes(values).tolist() == [True, True, True, True, False, False, True, False, True, True, False]


def test_a_built_pattern_tolerates_one_changed_byte_per_eight_literal_ones_at_most_two():
    assert tolerance_for(parse_pattern("11 22 33 44 55 66 77")) == 0
    assert tolerance_for(parse_pattern("11 22 33 44 ?? 55 66 77 88")) == 1
    assert tolerance_for(parse_pattern(" ".join(["AB"] * 40))) == 2


def image_with_a_near_copy(folder, base: int, window: bytes, near: bytes) -> MemoryImage:
    """A process's writable memory, saved as the builder saves it: `window` at base + 0x1000, `near` at + 0x8000."""
    memory = bytearray(0x10000)
    memory[0x1000:0x1000 + len(window)] = window
    memory[0x8000:0x8000 + len(near)] = near
    folder.mkdir()
    (folder / "image.bin").write_bytes(bytes(memory))
    region = {"start": base, "end": base + len(memory), "perms": "rw-p", "offset": 0, "path": ""}
    (folder / "regions.json").write_text(json.dumps({"pid": 1, "regions": [{**region, "file_offset": 0}],
                                                      "maps": [region]}))
    return MemoryImage.load(folder)


def test_a_chosen_pattern_is_clear_of_every_other_place_by_two_bytes_more_than_it_allows(tmp_path):
    # Another object whose bytes around the same values differ in only 3 places (on Minetest: an object near the
    # player, with the same floats beside it). A pattern unique with 2 bytes allowed to differ, as the builder once
    # chose, matches that object in a launch where 2 of the 3 are equal; the pattern chosen must leave a margin.
    before, after = bytes(range(0x11, 0x31)), bytes(range(0x51, 0x71))
    window = before + bytes(range(0x91, 0x9D)) + after
    near = bytearray(window)
    for index in (5, 50, 60):
        near[index] ^= 0x0F
    observations = []
    for number, base in enumerate((0x10000, 0x40000)):
        image = image_with_a_near_copy(tmp_path / str(number), base, window, bytes(near))
        value = base + 0x1000 + len(before)
        observations.append(Observation(pid=number, address=value, low=-len(before), high=len(window) - len(before),
                                        windows=[window, window], maps=[], image=image))
    model = derive(observations)
    unique_only = choose(model, observations, margin=0)
    assert unique_only is not None and unique_only.tolerance == 2  # unique, and the near copy 3 bytes away
    pick = choose(model, observations)
    assert pick is not None and pick.margin >= MARGIN
    for observation in observations:
        found = scan(observation.image, pick.pattern, RegionFilter(perms="rw"), tolerance=pick.tolerance + MARGIN)
        assert [m.address for m in found] == [observation.address + pick.start]
        observation.image.delete()


def test_a_byte_of_a_field_that_varied_is_left_out_with_its_word():
    # Bytes 0..3 a float near the player's coordinates: its low bytes differ between the processes, its high byte
    # (0xC0) does not, by the values seen; on Minetest a pattern of such high bytes matched nowhere in the next
    # fresh process. Bytes 4..7 a constant: kept.
    first = bytes([0x12, 0x34, 0x80, 0xC0, 0x11, 0x22, 0x33, 0x44]) + bytes([0x31] * 8)
    second = bytes([0x9A, 0x01, 0x82, 0xC0, 0x11, 0x22, 0x33, 0x44]) + bytes([0x31] * 8)
    model = derive([observation(0x5512_3456_7000, first), observation(0x5598_0ABC_D000, second)])
    literal = literal_before(model)
    assert literal[:4] == [False] * 4 and literal[4:8] == [True] * 4
    assert model.reasons["varying word"] == 1  # the high byte, the only one of its word that stayed the same


def test_strong_bytes_merely_unique_are_chosen_before_zeros_that_are_clear(tmp_path):
    # Before the value, 8 strong bytes that another object repeats with one changed: unique, never clear by
    # MARGIN. After it, words of zeros and 0x7FFF (weak, and searchable: each run has an anchor) that the other
    # object does not share: a pattern taking them would be clear. Measured on six fresh Minetest processes,
    # patterns of such weak bytes matched nowhere in 5 of 16 held-out launches (a zeroed field holds leftovers in
    # some), strong patterns without a margin in none: strong bytes win, and the pick says it has no margin.
    varying, other = bytes([0x21, 0x43, 0x65, 0x07]), bytes([0x89, 0xAB, 0xCD, 0x0F])
    weak_words = bytes([0xFF, 0x7F, 0xFF, 0x7F]) + bytes(4)
    strong = bytes(range(0x31, 0x39))
    value = bytes(range(0x91, 0x9D))

    def window(field: bytes) -> bytes:
        return field + strong + value + (weak_words + field) * 2 + weak_words

    near = bytearray(varying + strong + value + bytes([0x5A] * 32))
    near[6] ^= 0x0F
    observations = []
    for number, base in enumerate((0x5512_3456_0000, 0x5598_0ABC_0000)):
        image = image_with_a_near_copy(tmp_path / str(number), base, window(varying), bytes(near))
        address = base + 0x1000 + 12
        observations.append(Observation(pid=number, address=address, low=-12, high=len(window(varying)) - 12,
                                        windows=[window(varying), window(other)], maps=[], image=image))
    try:
        pick = choose_widening(observations).pick
        assert pick is not None
        kept = [value for value, mask in zip(pick.pattern.values, pick.pattern.masks) if mask == 0xFF]
        assert 0 not in kept, pick.pattern.text        # no weak byte, although those would have been clear
        assert pick.end <= 0 and pick.margin == 0      # before the value, and honest that it has no margin
    finally:
        for observation in observations:
            observation.image.delete()


def x_then_two_of_y(tmp_path, struct_x: bytes, struct_y: bytes) -> list[Observation]:
    """Three processes, the value 32 bytes into each window: the first holds `struct_x`, the other two `struct_y`."""
    observations = []
    for number, (base, window) in enumerate(((0x5512_3456_0000, struct_x), (0x5598_0ABC_0000, struct_y),
                                             (0x5577_2468_0000, struct_y))):
        image = image_with_a_near_copy(tmp_path / str(number), base, window, bytes(len(window)))
        observations.append(Observation(pid=number, address=base + 0x1000 + 32, low=-32, high=len(window) - 32,
                                        windows=[window, window], maps=[], image=image))
    return observations


def test_processes_holding_different_structs_build_from_the_group_that_shares_one(tmp_path):
    # The motion finder's copy of the position in each process is the likest to process 1's, and on Minetest
    # several structs holding it are about as alike: process 1 may hold another struct than processes 2 and 3.
    # No pattern is common to all three; processes 2 and 3 share one, and it is what the builder takes.
    value = bytes(range(0x91, 0x9D))
    struct_x = bytes(range(0x11, 0x31)) + value + bytes(range(0x41, 0x61))
    struct_y = bytes(range(0xB1, 0xD1)) + value + bytes(range(0x61, 0x81))
    observations = x_then_two_of_y(tmp_path, struct_x, struct_y)
    try:
        assert choose_widening(observations).pick is None
        widened, used = choose_from_subsets(observations, None)
        assert used == observations[1:] and widened.pick is not None
        for observation in used:
            found = scan(observation.image, widened.pick.pattern, RegionFilter(perms="rw"))
            assert [m.address for m in found] == [observation.address + widened.pick.start]
    finally:
        for observation in observations:
            observation.image.delete()


def test_strong_bytes_from_a_group_of_the_processes_come_before_weak_bytes_common_to_all(tmp_path):
    # All three processes share words of zeros and 0x7FFF after the value (weak bytes, searchable); processes 2
    # and 3 also share strong bytes before it. A pattern of weak bytes from a pair matched nowhere in two fresh
    # Minetest launches: the strong pattern of the group is taken, not the weak one common to all.
    value = bytes(range(0x91, 0x9D))
    # six strong bytes (too few for a pattern of their own), then the weak words
    weak = bytes([0x61, 0x69, 0x72, 0x73, 0x74, 0x75, 0, 0]) + (bytes([0xFF, 0x7F, 0xFF, 0x7F]) + bytes(4)) * 3
    struct_x = bytes(range(0x11, 0x31)) + value + weak
    struct_y = bytes(range(0xB1, 0xD1)) + value + weak
    observations = x_then_two_of_y(tmp_path, struct_x, struct_y)
    try:
        assert choose_widening(observations).pick is not None  # weak bytes common to all would do
        widened, used = choose_from_subsets(observations, None)
        assert used == observations[1:] and widened.pick is not None
        kept = [value for value, mask in zip(widened.pick.pattern.values, widened.pick.pattern.masks) if mask]
        assert 0 not in kept and 0xFF not in kept, widened.pick.pattern.text   # strong bytes only
    finally:
        for observation in observations:
            observation.image.delete()
