"""Damaged episode files never cost the user good data (issue 10, point 9), on real recordings damaged
on disk: every reader failure is one EpisodeFileError naming the file and the part, the label store
refuses what is not an episode and never rewrites it, unreadable labels are never saved over, and
`report` and `labels export` list each damaged file with its reason and go on with the rest."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from core.episode import load_episode as load_model
from core.labels.episodes import load_episode_labels, load_folder, scan_folder
from core.labels.model import AnnotatorLabels
from core.labels.store import LabelStoreError, read_labels, save_blocker, save_labels
from core.paths import PROJECT_ROOT
from core.recording.errors import EpisodeFileError
from core.recording.reader import EpisodeReader
from tests.damaged_files import DAMAGE, STEPS, damaged_copy, delete_part, labels, record_episode, set_attribute, sha

PER_STEP = ("image chunk", "step record")  # damage that costs one step, not the episode
LABELS_ONLY = ("both label copies",)  # damage that costs the labels, not the recording
RECORDING_ONLY = ("metadata not JSON",)  # damage the label slots do not depend on: labels still read and save


@pytest.fixture(scope="module")
def recording(tmp_path_factory) -> Path:
    return record_episode(tmp_path_factory.mktemp("recorded") / "episode.h5")


def _read_everything(path: Path) -> None:
    with EpisodeReader(path) as episode:
        for index in range(episode.step_count):
            episode.record(index)
            for name in episode.image_sets():
                episode.image(name, index)
        episode.samples(), episode.result, episode.frame_ticks(), episode.step_numbers()


def _check_names_file_and_part(error: BaseException, path: Path, part: str) -> None:
    assert isinstance(error, EpisodeFileError), f"{type(error).__name__} reached the caller: {error}"
    assert error.path == path and error.part == part
    assert str(path) in str(error) and part in str(error)


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_every_reader_failure_is_an_episode_file_error_naming_the_file_and_the_part(recording, tmp_path, damage):
    path = damaged_copy(recording, tmp_path, damage)
    part = DAMAGE[damage][1]
    if damage in LABELS_ONLY:
        _read_everything(path)  # the recording itself is intact
        readers = [read_labels, lambda p: save_labels(p, labels("carol"))]
    elif damage in PER_STEP:
        readers = [_read_everything]
    elif damage in RECORDING_ONLY:
        readers = [_read_everything, load_model, load_episode_labels]
    else:
        readers = [_read_everything, load_model, load_episode_labels, read_labels,
                   lambda p: save_labels(p, labels("carol"))]
    for reader in readers:
        with pytest.raises(Exception) as raised:  # any type: the test is which one arrives
            reader(path)
        _check_names_file_and_part(raised.value, path, part)
    if damage in PER_STEP:
        damaged_index = raised.value.step_index
        assert damaged_index == int(part.rsplit(" ", 1)[1]) - 1
        with EpisodeReader(path) as episode:  # every other step still reads
            for index in range(STEPS):
                if index != damaged_index:
                    episode.record(index)
                    assert episode.image("current", index).any()


def test_a_damaged_step_costs_only_that_step_in_the_replay_model(recording, tmp_path):
    path = damaged_copy(recording, tmp_path, "step record")
    episode = load_model(path)
    assert len(episode) == STEPS and list(episode.damaged_records) == [0]
    assert "damaged record at step 1" in episode.step(0).to_json()["thought"]
    with EpisodeReader(recording) as original:
        stored = original.records()[1:]
    assert [step.record_json() | {"source": step.source} for step in episode.steps(1)] == stored


@pytest.mark.parametrize("case", ["no /steps", "no /steps and no /labels", "no /images", "no format marker",
                                  "text renamed .h5", "version [1, 2]"])
def test_save_labels_refuses_a_file_that_is_not_an_episode_and_never_rewrites_it(recording, tmp_path, case):
    if case == "no /steps and no /labels":  # without its slots, a save would rewrite the whole file
        path = damaged_copy(recording, tmp_path, "no /steps")
        delete_part(path, "labels")
    else:
        path = damaged_copy(recording, tmp_path, case)
    digest, modified = sha(path), path.stat().st_mtime_ns
    with pytest.raises(LabelStoreError) as refused:
        save_labels(path, labels("alice"))
    assert isinstance(refused.value, EpisodeFileError) and str(path) in str(refused.value)
    assert "Nothing was changed" in str(refused.value)
    assert save_blocker(path) == str(refused.value).replace(" Nothing was changed.", "")  # said as it opens
    assert (sha(path), path.stat().st_mtime_ns) == (digest, modified)
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no working copy left behind


def test_an_episode_whose_two_label_copies_are_damaged_still_loads_and_is_never_saved_over(recording, tmp_path):
    path = damaged_copy(recording, tmp_path / "run", "both label copies")
    shutil.copyfile(recording, tmp_path / "run" / "good.h5")
    digest = sha(path)
    episode = load_episode_labels(path)
    assert episode.step_count == STEPS and episode.metadata["task_id"] == "q08_site_navigation"
    assert isinstance(episode.labels_error, EpisodeFileError) and episode.labels_error.part == "/labels/slots"
    assert episode.document.annotators == {}
    scan = scan_folder(tmp_path / "run")
    assert [e.path.name for e in scan.episodes] == ["both_label_copies.h5", "good.h5"] and scan.damaged == []
    assert scan.warnings == [f"labels of {path} left out: {episode.labels_error}"]
    assert "never saved over" in (save_blocker(path) or "")
    with pytest.raises(LabelStoreError, match="both stored copies"):
        save_labels(path, labels("carol"))
    assert sha(path) == digest


def test_a_read_only_file_or_folder_is_known_before_any_save(recording, tmp_path):
    path = tmp_path / "episode.h5"
    shutil.copyfile(recording, path)
    assert save_blocker(path) is None
    path.chmod(0o444)
    assert "read-only" in (save_blocker(path) or "")
    path.chmod(0o644)
    delete_part(path, "labels/slots")  # recorded before the slots: the first save writes a copy beside it
    tmp_path.chmod(0o555)
    try:
        blocker = save_blocker(path)
        assert blocker is not None and "read-only" in blocker and str(tmp_path) in blocker
        digest = sha(path)
        with pytest.raises(LabelStoreError, match="read-only"):
            save_labels(path, labels("alice"))
        assert sha(path) == digest
    finally:
        tmp_path.chmod(0o755)
    save_labels(path, labels("alice"))  # writable again: the slots are added and the labels saved
    assert read_labels(path).annotators["alice"] == labels("alice")


# -- the command line ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def run_folder(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cli") / "run"
    done = subprocess.run([sys.executable, "main.py", "run", "--tasks", "q08_site_navigation,q04_clock_interaction",
                           "--granularity", "goal", "--agent", "random", "--trials", "2", "--budget", "4", "--out",
                           str(out)], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return out


def _damaged_run(run_folder: Path, tmp_path: Path) -> tuple[Path, dict[str, tuple[Path, str]]]:
    """A copy of the run with three of its four episodes damaged, and one extra file that is not an episode."""
    folder = Path(shutil.copytree(run_folder, tmp_path / "run"))
    episodes = sorted((folder / "episodes").glob("*.h5"))
    save_labels(episodes[3], AnnotatorLabels("alice", failure_category="Lost", category_confirmed=True))
    set_attribute(episodes[0], "format_version", np.array([1, 2]))
    DAMAGE["both label copies"][0](episodes[1])
    episodes[2].write_text("not an episode\n")
    (folder / "episodes" / "notes.h5").write_text("q04 froze at step 3\n")
    return folder, {"version": (episodes[0], "format_version attribute"),
                    "labels": (episodes[1], "/labels/slots"), "text": (episodes[2], "file"),
                    "extra": (folder / "episodes" / "notes.h5", "file")}


def _warning_for(stderr: str, path: Path) -> str:
    lines = [line for line in stderr.splitlines() if line.startswith("warning:") and str(path) in line]
    assert len(lines) == 1, f"expected one warning about {path.name}:\n{stderr}"
    return lines[0]


def test_labels_export_lists_each_damaged_file_with_its_reason_and_exports_the_rest(run_folder, tmp_path):
    folder, damaged = _damaged_run(run_folder, tmp_path)
    done = subprocess.run([sys.executable, "main.py", "labels", "export", str(folder), "--format", "jsonl"],
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert {row["annotator"] for row in rows} == {"alice"} and rows[0]["failure_category"] == "Lost"
    for name, (path, part) in damaged.items():
        warning = _warning_for(done.stderr, path)
        assert f": {part}: " in warning, (name, warning)
    assert "from 2 episodes" in done.stderr  # the two readable episodes, one with unreadable labels
    episodes, warnings = load_folder(folder)
    assert len(episodes) == 2 and len(warnings) == 4


def test_report_lists_each_damaged_episode_file_with_its_reason_and_reports_every_episode(run_folder, tmp_path):
    folder, damaged = _damaged_run(run_folder, tmp_path)
    done = subprocess.run([sys.executable, "main.py", "report", str(folder), "--json"], cwd=PROJECT_ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["episodes"] == 4  # every result line is still counted
    assert sum(row["from_human"] for row in report["failures"]) == 1  # alice's label in the intact episode
    markdown = (folder / "report.md").read_text()
    for name in ("version", "labels", "text"):
        path, part = damaged[name]
        assert f"{part}: " in _warning_for(done.stderr, path)
        assert str(path) in markdown and part in markdown  # the report itself says which files were left out


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a read-only file system needs root")
def test_a_read_only_file_system_is_known_before_any_save(recording, tmp_path):
    source, mount = tmp_path / "source", tmp_path / "mount"
    source.mkdir()
    mount.mkdir()
    shutil.copyfile(recording, source / "episode.h5")
    if subprocess.run(["mount", "--bind", "-o", "ro", str(source), str(mount)], capture_output=True).returncode:
        pytest.skip("this machine does not allow bind mounts")
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(mount)], check=True, capture_output=True)
        path = mount / "episode.h5"
        assert path.stat().st_mode & 0o222  # the file itself still looks writable
        blocker = save_blocker(path)
        assert blocker is not None and "Read-only file system" in blocker
        with pytest.raises(LabelStoreError, match="Read-only file system"):
            save_labels(path, labels("alice"))
    finally:
        subprocess.run(["umount", str(mount)], check=True)
    assert read_labels(source / "episode.h5").annotators == {}
