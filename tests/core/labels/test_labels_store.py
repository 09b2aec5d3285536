"""The label store: a save killed mid-write loses nothing, the recording is never touched, and files that
must not be written are refused with the file left byte-for-byte unchanged."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import h5py
import pytest

from core.episode.metrics import LOST
from core.labels.model import AnnotatorLabels, DeadlockLabel, LabelDocument
from core.labels.slots import encode_document, encode_header
from core.labels.store import LabelStoreError, read_labels, save_labels
from core.paths import PROJECT_ROOT
from core.recording.reader import EpisodeReader
from core.recording.writer import LABEL_SLOT_BYTES, LABEL_SLOTS
from tests.core.labels.test_labels import make_episode

RECORDING = ("steps/table", "steps/record_bytes", "steps/record_index", "images/current", "samples/table")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _recording_checksums(path: Path) -> dict[str, str]:
    with h5py.File(path, "r") as file:
        return {name: hashlib.sha256(file[name][...].tobytes()).hexdigest() for name in RECORDING}


def _slots_region(path: Path) -> tuple[int, int]:
    with h5py.File(path, "r") as file:
        offset = file["labels"]["slots"].id.get_offset()
    return offset, offset + LABEL_SLOTS * LABEL_SLOT_BYTES


def _labels(version: int, annotator: str = "alice") -> AnnotatorLabels:
    return AnnotatorLabels(annotator, spans=(DeadlockLabel(2, 5, kind="aware", note=f"version {version}"),),
                           failure_category=LOST, category_confirmed=True, updated=f"2025-01-0{version}T00:00:00Z")


@pytest.mark.parametrize("stage", ["payload-half", "before-header"])
def test_a_save_killed_mid_write_keeps_the_previous_labels(tmp_path, stage):
    path = make_episode(tmp_path / "episode.h5")
    save_labels(path, _labels(1, "bob"))
    save_labels(path, _labels(1))
    save_labels(path, _labels(2))  # slot 1 now holds an older valid copy: the next save overwrites it
    start, end = _slots_region(path)
    before = path.read_bytes()
    big_note = "".join(f"{i:x}" for i in range(20000))  # a payload of tens of kB, so "half" is a real tear
    script = textwrap.dedent(f"""
        import sys
        from core.labels import store
        from core.labels.model import AnnotatorLabels, DeadlockLabel

        def pause(stage):
            if stage == {stage!r}:
                print("reached", flush=True)
                sys.stdin.read()  # wait here until the test kills us

        store._write_hook = pause
        store.save_labels({str(path)!r}, AnnotatorLabels("alice", spans=(DeadlockLabel(1, 20, note={big_note!r}),)))
        print("finished", flush=True)
    """)
    with subprocess.Popen([sys.executable, "-c", script], cwd=PROJECT_ROOT, stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True) as saver:  # `with`: its pipes closed, it reaped
        try:
            assert saver.stdout.readline().strip() == "reached"
        finally:
            os.kill(saver.pid, signal.SIGKILL)
    assert saver.returncode == -signal.SIGKILL
    after = path.read_bytes()
    assert after[start:end] != before[start:end]  # the killed save really wrote part of a slot
    assert after[:start] == before[:start] and after[end:] == before[end:]  # and nothing else
    document = read_labels(path)
    assert document.annotators["alice"] == _labels(2) and document.annotators["bob"] == _labels(1, "bob")
    save_labels(path, _labels(3))  # and saving carries on from the intact copy
    assert read_labels(path).annotators["alice"] == _labels(3)


def test_a_slot_that_fails_its_checksums_is_ignored(tmp_path):
    # What a torn or reordered write could leave: a newer header whose payload never fully landed, or a
    # header damaged itself. Either way the reader keeps the newest copy that checks out.
    path = make_episode(tmp_path / "episode.h5")
    save_labels(path, _labels(1))  # slot 0
    save_labels(path, _labels(2))  # slot 1
    start, _ = _slots_region(path)
    payload = encode_document(LabelDocument().with_annotator(_labels(3)))
    with path.open("r+b") as stream:
        stream.seek(start)
        stream.write(encode_header(99, payload) + payload[:len(payload) // 2])
    assert read_labels(path).annotators["alice"] == _labels(2)
    header = bytearray(encode_header(99, payload))
    header[12] ^= 0x01  # one flipped bit in the sequence number
    with path.open("r+b") as stream:
        stream.seek(start)
        stream.write(bytes(header) + payload)
    assert read_labels(path).annotators["alice"] == _labels(2)
    save_labels(path, _labels(4))  # the damaged slot is the one written next
    assert read_labels(path).annotators["alice"] == _labels(4)


def test_many_saves_never_touch_the_recording(tmp_path):
    path = make_episode(tmp_path / "episode.h5")
    checksums = _recording_checksums(path)
    start, end = _slots_region(path)
    before = path.read_bytes()
    for version in range(40):
        save_labels(path, AnnotatorLabels("alice" if version % 2 else "bob",
                                          spans=(DeadlockLabel(1, 1 + version % 19, note=str(version)),)))
    after = path.read_bytes()
    assert len(after) == len(before) and after[:start] == before[:start] and after[end:] == before[end:]
    assert _recording_checksums(path) == checksums
    assert read_labels(path).annotators["alice"].spans[0].note == "39"
    with h5py.File(path, "r") as plain:  # plain h5py still opens it
        assert plain["steps"]["table"].shape == (20,)
    with EpisodeReader(path) as episode:
        assert episode.step_count == 20 and episode.result["failure_category_suggestion"] == "Unaware Deadlock"


def test_an_episode_recorded_before_the_slots_gets_them_on_first_save(tmp_path):
    path = make_episode(tmp_path / "old.h5")
    with h5py.File(path, "r+") as file:  # as episodes were written before label slots existed
        del file["labels"]["slots"]
    checksums = _recording_checksums(path)
    assert read_labels(path).annotators == {}
    save_labels(path, _labels(1))
    save_labels(path, _labels(2, "bob"))
    assert _recording_checksums(path) == checksums
    assert set(read_labels(path).annotators) == {"alice", "bob"}
    assert not list(tmp_path.glob(".*.tmp"))  # the working copy is gone
    with EpisodeReader(path) as episode:
        assert episode.step_count == 20


def _corrupt_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    truncated = make_episode(tmp_path / "truncated.h5")
    with truncated.open("r+b") as stream:
        stream.truncate(truncated.stat().st_size // 2)
    garbage = tmp_path / "garbage.h5"
    garbage.write_bytes(b"\x89HDF\r\n\x1a\n" + os.urandom(4096))
    newer = make_episode(tmp_path / "newer.h5")
    with h5py.File(newer, "r+") as file:
        file.attrs["format_version"] = 2
    foreign = tmp_path / "foreign.h5"
    with h5py.File(foreign, "w") as file:
        file.attrs["format"] = "something-else"
        file.create_group("labels")
    return {"truncated": (truncated, "truncated or corrupt"), "garbage": (garbage, "truncated or corrupt"),
            "newer": (newer, "format version 2.*update PokeGym"), "foreign": (foreign, "not a PokeGym episode")}


@pytest.mark.parametrize("case", ["truncated", "garbage", "newer", "foreign"])
def test_files_that_are_not_sound_episodes_are_refused_unchanged(tmp_path, case):
    path, message = _corrupt_files(tmp_path)[case]
    digest = _sha(path)
    with pytest.raises(LabelStoreError, match=message):
        save_labels(path, _labels(1))
    with pytest.raises(LabelStoreError, match=message):
        read_labels(path)
    assert _sha(path) == digest


def test_a_read_only_episode_is_refused_with_what_to_do(tmp_path):
    path = make_episode(tmp_path / "episode.h5")
    save_labels(path, _labels(1))
    path.chmod(0o444)
    digest = _sha(path)
    with pytest.raises(LabelStoreError, match=r"read-only.*chmod u\+w"):
        save_labels(path, _labels(2))
    assert _sha(path) == digest
    assert read_labels(path).annotators["alice"] == _labels(1)  # reading still works
    assert _sha(path) == digest


def test_reading_never_modifies_the_file(tmp_path):
    path = make_episode(tmp_path / "episode.h5")
    save_labels(path, _labels(1))
    digest, mtime = _sha(path), path.stat().st_mtime_ns
    for _ in range(3):
        read_labels(path)
    assert (_sha(path), path.stat().st_mtime_ns) == (digest, mtime)


def test_a_document_too_big_for_a_slot_is_refused(tmp_path):
    path = make_episode(tmp_path / "episode.h5")
    save_labels(path, _labels(1))
    digest = _sha(path)
    huge = AnnotatorLabels("bob", spans=(DeadlockLabel(1, 2, note=os.urandom(LABEL_SLOT_BYTES).hex()),))
    with pytest.raises(LabelStoreError, match="shorten the notes"):
        save_labels(path, huge)
    assert _sha(path) == digest and read_labels(path).annotators["alice"] == _labels(1)


def test_the_automatic_annotator_name_is_reserved(tmp_path):
    path = make_episode(tmp_path / "episode.h5")
    with pytest.raises(LabelStoreError, match="reserved"):
        save_labels(path, AnnotatorLabels("auto"))


def test_two_damaged_copies_are_refused_instead_of_being_saved_over(tmp_path):
    path = make_episode(tmp_path / "episode.h5")
    save_labels(path, _labels(1, "alice"))
    save_labels(path, _labels(2, "bob"))
    start, _ = _slots_region(path)
    with path.open("r+b") as stream:
        for slot in range(LABEL_SLOTS):
            stream.seek(start + slot * LABEL_SLOT_BYTES + 40)
            stream.write(b"\xff" * 64)  # both payloads damaged, headers intact
    before = _sha(path)
    with pytest.raises(LabelStoreError, match="both stored copies"):
        read_labels(path)
    with pytest.raises(LabelStoreError, match="both stored copies"):
        save_labels(path, _labels(3, "carol"))  # would otherwise start over and drop alice's and bob's
    assert _sha(path) == before


def test_a_checksummed_copy_that_is_not_a_label_document_is_a_clear_error(tmp_path):
    import json
    import zlib

    path = make_episode(tmp_path / "episode.h5")
    start, _ = _slots_region(path)
    for payload in (b"not deflate at all", zlib.compress(json.dumps([1, 2, 3]).encode())):
        with path.open("r+b") as stream:
            stream.seek(start)
            stream.write(encode_header(5, payload) + payload)
        with pytest.raises(LabelStoreError, match="not a valid label document"):
            read_labels(path)
