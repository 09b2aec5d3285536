"""Deadlock labels: editing with undo, saving into real episode files, agreement (kappa) and export."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest

import main
from core.episode.metrics import AWARE, LOST, SUCCESS, UNAWARE, UNCLASSIFIED
from core.labels.agreement import category_agreement, cohen_kappa, step_agreement, step_classes
from core.labels.episodes import load_episode_labels, load_folder, open_editor
from core.labels.export import COLUMNS, export_labels
from core.labels.model import AnnotatorLabels, DeadlockLabel, LabelEditor
from core.labels.store import read_labels, save_labels
from core.recording.reader import EpisodeReader
from core.recording.writer import EpisodeWriter

SHAPE = (12, 16, 3)


def make_episode(path: Path, steps: int = 20, deadlocks: tuple = ((1, 4, True), (9, 13, False)),
                 category: str | None = UNAWARE, task_id: str = "q01", agent: str = "random") -> Path:
    """A real episode file; `deadlocks` are metrics.deadlocks as the runner wrote them before metrics v2
    ([start, end, recovered] with 0-based indices), which old recordings still hold."""
    writer = EpisodeWriter(path, {"task_id": task_id, "granularity": "goal_only", "agent": agent,
                                  "privileged": False}, SHAPE)
    for i in range(steps):
        writer.add_step({"step": i + 1, "time": 1000.0 + i, "tick_before": i * 15, "tick_after": i * 15 + 15,
                         "latency_s": 0.25, "displacement": 0.0, "ineffective": 1, "source": "agent"},
                        {"action": "MoveForward", "thought": f"step {i + 1}"}, {"current": np.full(SHAPE, i, np.uint8)})
        writer.add_samples([{"time": 1.0 * i, "tick": i, "map_id": 1, "x": i, "y": -i, "z": 0, "facing": 0,
                             "camera_yaw": 0, "camera_pitch": -12, "flags": 0, "dialogue_active": 0}])
    if category is not None:
        writer.finish({"success": category == SUCCESS, "steps_used": steps, "end_reason": "budget",
                       "failure_category_suggestion": category,
                       "metrics": {"deadlocks": [d if isinstance(d, dict) else list(d) for d in deadlocks]}})
    else:
        writer.abandon()
    return path


# -- the editor --------------------------------------------------------------------------------------
def _editor(tmp_path: Path, annotator: str = "alice") -> tuple[Path, LabelEditor]:
    path = make_episode(tmp_path / "episode.h5")
    return path, open_editor(path, annotator)


def test_a_new_annotator_starts_from_the_automatic_suggestions(tmp_path):
    _, editor = _editor(tmp_path)
    # metrics.deadlocks holds 0-based indices; the labels use the step numbers the user sees (index + 1)
    assert [(s.start, s.end) for s in editor.spans] == [(2, 5), (10, 14)]
    assert all(s.origin == "suggested" and s.status == "pending" for s in editor.spans)
    assert [s.kind for s in editor.spans] == [None, "unaware"]  # only the final unrecovered span is classified
    assert editor.labels.failure_category == UNAWARE and not editor.labels.category_confirmed
    assert not editor.dirty and not editor.can_undo
    assert editor.next_candidate(0) == 2 and editor.next_candidate(2) == 10 and editor.next_candidate(10) is None
    assert editor.previous_candidate(10) == 2 and editor.previous_candidate(2) is None


def test_suggestions_from_current_metrics_carry_each_spans_awareness(tmp_path):
    spans = (  # metrics v2: objects keyed by step number, every span classified
        {"start": 2, "end": 5, "recovered": True, "ended_by": "agent", "awareness": "aware", "awareness_step": 6},
        {"start": 8, "end": 9, "recovered": False, "ended_by": "intervention", "awareness": "unaware",
         "awareness_step": None},
        {"start": 12, "end": 16, "recovered": False, "ended_by": None, "awareness": "unclassified",
         "awareness_step": None})
    path = make_episode(tmp_path / "v2.h5", deadlocks=spans, category=UNCLASSIFIED)
    editor = open_editor(path, "alice")
    assert [(s.start, s.end, s.kind) for s in editor.spans] == [(2, 5, "aware"), (8, 9, "unaware"), (12, 16, None)]
    assert editor.spans[0].awareness_step == 5  # said "stuck" right after the span: shown at its last step
    assert editor.labels.failure_category is None  # unclassified: the annotator must decide


def test_reviewing_suggestions_accepts_trims_and_rejects(tmp_path):
    _, editor = _editor(tmp_path)
    editor.set_note(1, "")  # e.g. a note field left unchanged: the suggestion is still awaiting review
    editor.set_edge(1, start=10)
    assert editor.spans[1].pending and not editor.can_undo
    editor.reject_suggestion(0)
    assert [(s.start, s.end) for s in editor.spans] == [(10, 14)]
    assert editor.labels.rejected[0].status == "rejected" and editor.next_candidate(0) == 10
    editor.trim(0, start=11)
    trimmed = editor.spans[0]
    assert (trimmed.start, trimmed.end, trimmed.origin, trimmed.status) == (11, 14, "human", "accepted")
    with pytest.raises(ValueError, match="not a pending suggestion"):
        editor.accept_suggestion(0)
    editor.set_failure_category(AWARE)
    assert editor.labels.failure_category == AWARE and editor.labels.category_confirmed


def test_spans_never_overlap_and_edges_stop_at_neighbours(tmp_path):
    _, editor = _editor(tmp_path)
    with pytest.raises(ValueError, match=r"overlap span #0 \(2\.\.5\)"):
        editor.add_span(4, 7)
    with pytest.raises(ValueError, match="past the episode's last step 20"):
        editor.add_span(18, 21)
    assert editor.add_span(7, 8, kind="aware") == 1
    assert editor.set_edge(1, start=3).start == 6  # stops right after span 2..5
    assert editor.set_edge(1, end=30).end == 9  # stops right before span 10..14
    assert editor.set_edge(1, start=12) == DeadlockLabel(9, 9, kind="aware", created=editor.spans[1].created,
                                                updated=editor.spans[1].updated)  # start stops at the end
    assert editor.set_edge(2, end=99).end == 20  # the episode's last step
    assert [(s.start, s.end) for s in editor.spans] == [(2, 5), (9, 9), (10, 20)]


def test_split_and_merge_keep_the_classification(tmp_path):
    _, editor = _editor(tmp_path)
    editor.set_awareness_step(1, 13)
    editor.set_note(1, "walks into the fence")
    assert editor.split_span(1, 12) == (1, 2)
    left, right = editor.spans[1], editor.spans[2]
    assert (left.start, left.end, left.awareness_step, left.kind) == (10, 11, None, "unaware")
    assert (right.start, right.end, right.awareness_step, right.note) == (12, 14, 13, "walks into the fence")
    with pytest.raises(ValueError, match="split"):
        editor.split_span(1, 10)
    editor.set_kind(0, "aware")
    assert editor.merge_spans(2, 0) == 0
    merged = editor.spans[0]
    assert (merged.start, merged.end) == (2, 14) and len(editor.spans) == 1
    assert merged.kind is None  # aware and unaware disagreed: the user must decide again
    assert merged.awareness_step == 13 and merged.note == "walks into the fence"


def test_undo_and_redo_walk_every_edit_back_and_forth(tmp_path):
    _, editor = _editor(tmp_path)
    changes = []
    editor.on_change.append(lambda: changes.append(editor.dirty))
    start = editor.labels
    editor.accept_suggestion(0)
    editor.add_span(16, 18)
    editor.set_kind(2, "aware")
    editor.set_note(2, "spins")
    editor.merge_spans(1, 2)
    editor.set_failure_category(LOST)
    editor.set_note(0, "")  # no visible change: no undo entry
    end = editor.labels
    assert editor.undo_text == "Set failure category to Lost" and editor.dirty
    while editor.can_undo:
        editor.undo()
    assert editor.labels == start and not editor.dirty and editor.redo_text == "Accept suggestion 2-5"
    while editor.can_redo:
        editor.redo()
    assert editor.labels == end
    editor.undo()
    editor.set_kind(0, "unaware")  # a new edit drops what could be redone
    assert not editor.can_redo
    assert len(changes) == 6 + 6 + 6 + 2 and changes[-1] is True


# -- saving ------------------------------------------------------------------------------------------
def test_labels_survive_save_and_reopen_including_after_undo(tmp_path):
    path, editor = _editor(tmp_path)
    editor.accept_suggestion(0)
    editor.set_awareness_step(1, 12)
    editor.add_span(17, 19, note="naïve ünïcode")
    save_labels(path, editor.labels)
    editor.mark_saved()
    reopened = open_editor(path, "alice")
    assert reopened.labels == editor.labels and not reopened.dirty
    reopened.undo()  # nothing to undo in a fresh session
    assert reopened.labels == editor.labels
    editor.undo()
    assert editor.dirty
    save_labels(path, editor.labels)
    assert read_labels(path).annotators["alice"].spans == editor.spans
    assert [(s.start, s.end) for s in read_labels(path).annotators["alice"].spans] == [(2, 5), (10, 14)]
    with EpisodeReader(path) as episode:  # the episode itself still reads normally
        assert episode.step_count == 20 and episode.record(3)["thought"] == "step 4"


def test_two_annotators_keep_their_labels_side_by_side(tmp_path):
    path, alice = _editor(tmp_path, "alice")
    bob = open_editor(path, "bob")
    alice.set_failure_category(LOST)
    save_labels(path, alice.labels)
    bob.delete_span(0)
    save_labels(path, bob.labels)
    alice.add_span(18, 20)
    save_labels(path, alice.labels)
    document = read_labels(path)
    assert set(document.annotators) == {"alice", "bob"}
    assert document.annotators["bob"].spans == bob.spans and len(bob.spans) == 1
    assert document.annotators["alice"] == alice.labels
    assert open_editor(path, "carol").labels.spans[0].pending  # a third annotator still gets suggestions


def test_kappa_matches_the_textbook_example():
    # Wikipedia's Cohen's kappa example: 50 proposals, 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    result = cohen_kappa(a, b)
    assert result.observed == pytest.approx(0.7) and result.expected == pytest.approx(0.5)
    assert result.kappa == pytest.approx(0.4)


def test_kappa_degenerate_cases_never_divide_by_zero():
    assert cohen_kappa(["none"] * 5, ["none"] * 5).kappa == 1.0
    assert cohen_kappa([], []).kappa is None and cohen_kappa([], []).describe().startswith("kappa n/a")
    assert cohen_kappa(["a", "b"], ["b", "a"]).kappa == pytest.approx(-1.0)
    with pytest.raises(ValueError):
        cohen_kappa(["a"], [])


def _labelled_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "run"
    (folder / "episodes").mkdir(parents=True)
    first = make_episode(folder / "episodes" / "a.h5", steps=10, deadlocks=((2, 5, False),), category=UNAWARE)
    second = make_episode(folder / "episodes" / "b.h5", steps=10, deadlocks=(), category=LOST, task_id="q02")
    save_labels(first, AnnotatorLabels("alice", spans=(DeadlockLabel(3, 6, kind="unaware", note='wall, "corner"'),),
                                       failure_category=UNAWARE, category_confirmed=True,
                                       updated="2025-01-01T00:00:00Z"))
    save_labels(first, AnnotatorLabels("bob", spans=(DeadlockLabel(4, 7, kind="aware", awareness_step=5),),
                                       failure_category=AWARE, category_confirmed=True))
    save_labels(second, AnnotatorLabels("alice", failure_category=LOST, category_confirmed=True))
    save_labels(second, AnnotatorLabels("bob", spans=(DeadlockLabel(9, 10),), failure_category=LOST,
                                        category_confirmed=True))
    (folder / "broken.h5").write_bytes(b"not an hdf5 file")
    return folder


def test_agreement_between_annotators_and_against_the_suggestions(tmp_path):
    episodes, warnings = load_folder(_labelled_folder(tmp_path))
    assert len(episodes) == 2 and len(warnings) == 1 and "broken.h5" in warnings[0]
    # categories: (Unaware, Aware), (Lost, Lost) -> observed 1/2, chance (1*0 + 1*0 + 1*1)/4 = 1/4 -> 1/3
    assert category_agreement(episodes, "alice", "bob").kappa == pytest.approx(1 / 3)
    # steps, binary: alice 3..6 and nothing; bob 4..7 and 9..10. Over 20 steps they agree on 16
    # (4-6 deadlock; 1-2 and 8-10 of a, 1-8 of b none); alice has 4 deadlock steps, bob 6.
    binary = step_agreement(episodes, "alice", "bob", "binary")
    chance = (4 * 6 + 16 * 14) / 400
    assert binary.kappa == pytest.approx((16 / 20 - chance) / (1 - chance)) and binary.episodes == 2
    assert binary.kappa == pytest.approx(0.18 / 0.38)
    assert step_agreement(episodes, "alice", "bob", "kind").kappa < binary.kappa  # aware vs unaware disagree
    # against the automatic suggestions: the final unrecovered deadlock is steps 3..6, unaware
    assert step_agreement(episodes, "alice", "auto", "kind").kappa == 1.0
    assert category_agreement(episodes, "alice", "auto").kappa == 1.0
    assert step_classes(episodes[0].annotator("auto"), 10)[1:7] == ["none"] + ["unaware"] * 4 + ["none"]


def test_the_cli_prints_kappas(tmp_path, capsys):
    folder = _labelled_folder(tmp_path)
    assert main.main(["labels", "agreement", str(folder), "--a", "alice", "--b", "auto"]) == 0
    out, err = capsys.readouterr()
    assert "failure category         kappa 1.000" in out and "broken.h5" in err


# -- export ------------------------------------------------------------------------------------------
def test_export_to_csv_has_a_row_per_span_and_per_episode(tmp_path):
    folder = _labelled_folder(tmp_path)
    out = tmp_path / "labels.csv"
    assert main.main(["labels", "export", str(folder), "--format", "csv", "--out", str(out)]) == 0
    rows = list(csv.DictReader(out.read_text(encoding="utf-8").splitlines()))
    assert list(rows[0]) == list(COLUMNS) and len(rows) == 4 + 3
    alice_span = next(r for r in rows if r["annotator"] == "alice" and r["row_type"] == "span")
    assert alice_span["episode_file"] == "episodes/a.h5" and alice_span["task_id"] == "q01"
    assert (alice_span["span_start"], alice_span["span_end"], alice_span["span_kind"]) == ("3", "6", "unaware")
    assert alice_span["span_note"] == 'wall, "corner"' and alice_span["labelled_at"] == "2025-01-01T00:00:00Z"
    episode_row = next(r for r in rows if r["annotator"] == "bob" and r["row_type"] == "episode"
                       and r["task_id"] == "q02")
    assert (episode_row["failure_category"], episode_row["suggested_category"]) == (LOST, LOST)
    assert episode_row["agent"] == "random" and episode_row["granularity"] == "goal_only"
    assert episode_row["span_start"] == ""


def test_export_to_jsonl_skips_broken_files_with_a_warning(tmp_path):
    folder = _labelled_folder(tmp_path)
    stream = io.StringIO()
    result = export_labels(folder, stream, "jsonl")
    rows = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert result.rows == len(rows) == 7 and result.episodes == 2 and len(result.warnings) == 1
    bob = next(r for r in rows if r["annotator"] == "bob" and r["row_type"] == "span" and r["task_id"] == "q01")
    assert bob["awareness_step"] == 5 and bob["span_kind"] == "aware" and bob["span_status"] == "accepted"
    assert bob["failure_category"] is None


def test_an_unfinished_episode_can_be_labelled(tmp_path):
    path = make_episode(tmp_path / "cut.h5", category=None)
    editor = open_editor(path, "alice")
    assert editor.spans == () and editor.labels.failure_category is None
    editor.add_span(3, 8)
    save_labels(path, editor.labels)
    assert load_episode_labels(path).annotator("alice").spans == editor.spans
    assert load_episode_labels(path).annotator("auto") is None
