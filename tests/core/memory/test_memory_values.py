"""Value scans with Cheat Engine's semantics on a live foreign process (a C program we compile),
through the Python API and through `memory scan/next/undo/list` sessions across separate calls."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from core.game.pad import PadState
from core.memory.readers import LinuxReader
from core.memory.values import Condition, ScanValueError, check_condition, evaluate, typed_tolerance, value_type
from core.memory.valuescan import ValueScan
from core.paths import PROJECT_ROOT
from tests.foreign import ForeignGame


@pytest.fixture
def game(foreign_binary):
    with ForeignGame(foreign_binary) as running:
        yield running


def addresses(scan: ValueScan) -> set[int]:
    return {address for address, _ in scan.candidates()}


def test_an_exact_integer_then_increased_by_finds_the_coins_and_undo_goes_back(game):
    with ValueScan(LinuxReader(game.pid), value_type("i32")) as scan:
        assert scan.first_scan(Condition("exact", 250)) >= 1
        assert game.truth["coins"] in addresses(scan)
        game.set("coins", 260)
        assert scan.next_scan(Condition("increased_by", 10)) >= 1
        assert game.truth["coins"] in addresses(scan)
        before_undo = scan.count
        assert scan.next_scan(Condition("decreased")) == 0  # coins went up, so nothing decreased
        assert scan.undo() == before_undo
        with pytest.raises(ScanValueError, match="nothing to undo"):
            scan.undo()


def test_an_unknown_unaligned_float_is_found_by_changes_alone(game):
    """The 'odd' float sits at an odd address: only an unaligned scan can see it."""
    assert game.truth["odd"] % 4 != 0
    with ValueScan(LinuxReader(game.pid), value_type("f32"), aligned=False) as scan:
        scan.first_scan(Condition("unknown"))
        game.set("odd", 4.0)
        scan.next_scan(Condition("increased"))
        game.hold(PadState(left_y=1.0), 0.5)  # walking changes much, but not this value
        scan.next_scan(Condition("unchanged"))
        game.set("odd", 2.5)
        scan.next_scan(Condition("decreased_by", 1.5, tolerance=1e-6))
        scan.next_scan(Condition("decreased_by", 0.75, tolerance=1e-6, against_first=True))  # 3.25 at first
        assert game.truth["odd"] in addresses(scan)
        assert scan.count <= 3
    with ValueScan(LinuxReader(game.pid), value_type("f32"), aligned=True) as aligned:
        aligned.first_scan(Condition("exact", 2.5, tolerance=0.0))
        assert game.truth["odd"] not in addresses(aligned)


@pytest.mark.parametrize(("name", "field", "value", "new"), [
    ("i8", "mood", -3, -7), ("i64", "big", 5_000_000_000, 6_000_000_000), ("f64", "clock", 0.0, 1234.5)])
def test_each_width_and_signedness_is_read_as_the_game_stores_it(game, name, field, value, new):
    with ValueScan(LinuxReader(game.pid), value_type(name)) as scan:
        scan.first_scan(Condition("exact", value, tolerance=0.0))
        assert game.truth[field] in addresses(scan)
        game.set(field, new)
        scan.next_scan(Condition("equal", new, tolerance=0.0))
        assert game.truth[field] in addresses(scan)
        assert dict(scan.candidates())[game.truth[field]] == new


def test_a_range_scan_and_between_keep_only_values_inside():
    vtype = value_type("u16")
    data = np.array([0, 5, 10, 65535, 7], dtype="<u2")
    keep = evaluate(Condition("range", 5, 10), vtype, data)
    assert keep.tolist() == [False, True, True, False, True]
    assert evaluate(Condition("between", 6.5, 7.5), vtype, data).tolist() == [False, False, False, False, True]


def test_changed_compares_bytes_so_a_nan_that_stays_nan_is_unchanged():
    vtype = value_type("f32")
    before = np.array([np.nan, 1.0, 2.0], dtype="<f4")
    after = np.array([np.nan, 1.0, 2.5], dtype="<f4")
    assert evaluate(Condition("unchanged"), vtype, after, before).tolist() == [True, True, False]
    assert evaluate(Condition("increased"), vtype, after, before).tolist() == [False, False, True]


def test_integer_steps_are_exact_even_for_64_bit_values():
    vtype = value_type("u64")
    before = np.array([2**63, 5], dtype="<u8")
    after = np.array([2**63 + 1, 6], dtype="<u8")
    assert evaluate(Condition("increased_by", 1), vtype, after, before).tolist() == [True, True]


def test_a_typed_float_matches_to_its_typed_precision():
    assert typed_tolerance("12.5") == pytest.approx(0.05)
    assert typed_tolerance("12") == pytest.approx(0.5)
    keep = evaluate(Condition("exact", 12.5, tolerance=typed_tolerance("12.5")), value_type("f32"),
                    np.array([12.46, 12.54, 12.6], dtype="<f4"))
    assert keep.tolist() == [True, True, False]


@pytest.mark.parametrize(("condition", "first", "message"), [
    (Condition("bigger"), False, "unknown next scan 'bigger'"),
    (Condition("exact"), True, "needs a value"),
    (Condition("between", 5, 1), False, "the range 5 to 1 is empty"),
    (Condition("equal", 1, against_first=True), False, "applies to changes"),
    (Condition("changed", tolerance=-1), False, "tolerance must be"),
])
def test_bad_scans_are_refused_with_the_reason(condition, first, message):
    with pytest.raises(ScanValueError, match=message):
        check_condition(condition, first)


@pytest.mark.parametrize(("name", "text", "message"), [
    ("u8", "300", "does not fit in u8"), ("i32", "1.5", "not an integer"), ("f32", "abc", "not a number"),
    ("f32", "nan", "finite"), ("u7", "1", "unknown value type")])
def test_bad_values_are_refused_with_the_reason(name, text, message):
    with pytest.raises(ScanValueError, match=message):
        value_type(name).parse(text)


def memory(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "main.py", "memory", *args], cwd=PROJECT_ROOT, capture_output=True,
                          text=True, timeout=120)


def test_a_session_survives_between_separate_command_line_calls(game, tmp_path):
    session = tmp_path / "session"
    first = memory("scan", "--pid", str(game.pid), "--session", str(session), "--type", "f32", "--unknown",
                   "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["count"] > 10_000
    game.set("odd", 9.75)
    narrowed = json.loads(memory("next", "--session", str(session), "--op", "changed", "--json").stdout)
    game.set("odd", 8.0)
    narrowed = json.loads(memory("next", "--session", str(session), "--op", "decreased-by", "--value", "1.75",
                                 "--json").stdout)
    assert narrowed["count"] < 50 and narrowed["can_undo"]
    undone = json.loads(memory("undo", "--session", str(session), "--json").stdout)
    assert undone["count"] > narrowed["count"] and not undone["can_undo"]
    listed = json.loads(memory("list", "--session", str(session), "--json", "--show", "5").stdout)
    assert listed["count"] == undone["count"] and len(listed["history"]) == 4
    assert not list(session.glob("*.pkl")) and (session / "session.json").exists()


def test_a_session_refuses_a_process_that_has_gone(foreign_binary, tmp_path):
    session = tmp_path / "s"
    with ForeignGame(foreign_binary) as game:
        assert memory("scan", "--pid", str(game.pid), "--session", str(session), "--type", "i32", "--value",
                      "250").returncode == 0
    result = memory("next", "--session", str(session), "--op", "unchanged")
    assert result.returncode == 2 and "has exited: start a new scan" in result.stderr


def test_the_command_line_explains_bad_values_and_missing_sessions(game, tmp_path):
    bad = memory("scan", "--pid", str(game.pid), "--session", str(tmp_path / "a"), "--type", "u8", "--value", "300")
    assert bad.returncode == 2 and "300 does not fit in u8" in bad.stderr
    missing = memory("next", "--session", str(tmp_path / "nowhere"), "--op", "changed")
    assert missing.returncode == 2 and "holds no scan session" in missing.stderr
