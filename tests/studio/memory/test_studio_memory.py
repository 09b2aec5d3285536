"""The studio's Memory tab (pytest-qt, offscreen): value scans with live values and a plot, then the
motion-guided finder, a signature, a saved profile that is verified and tried on the live world."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

import yaml

from core.evaluation.profile import load_profile
from core.game.pad import PadState
from tests.conftest import attach_ground_truth


@pytest.fixture
def window(live_window):
    live_window.tabs.setCurrentWidget(live_window.memory)
    return live_window


def test_scans_narrow_to_the_camera_pitch_and_its_value_is_plotted_beside_the_pad(window, qtbot, builtin_profile):
    session, memory = window.session, window.memory
    truth = attach_ground_truth(session.host.world, builtin_profile)
    pitch = truth.address + 44  # camera_pitch (docs/state-block.md), as a user would read it off a debug overlay
    panel = memory.scan_panel
    panel.type.setCurrentText("f32")
    panel.first_kind.setCurrentIndex(0)  # exact value
    start = truth.read()["camera_pitch"]
    qtbot.keyClicks(panel.first_value, f"{start:.1f}")
    panel.first_button.click()
    qtbot.waitUntil(lambda: "first scan" in panel.status.text(), timeout=60_000)

    def next_scan(op: str) -> list[int]:
        shown = memory.rows
        panel.next_op.setCurrentIndex(panel.next_op.findData(op))
        panel.next_button.click()
        qtbot.waitUntil(lambda: memory.rows is not shown, timeout=60_000)  # each scan's report is a new list
        assert f"next scan: {op}" in panel.status.text()
        return [address for address, _ in memory.rows]

    def look(up: float) -> None:
        before = truth.read()["camera_pitch"]
        session.human_input(PadState(right_y=up), 0.5)  # the pitch rises (up 1) or falls (-1)
        # Taken off the queue is not yet played: on a loaded machine the next scan once ran before the pitch moved.
        qtbot.waitUntil(lambda: session.human_inputs_waiting == 0 and
                        (truth.read()["camera_pitch"] - before) * up > 1.0, timeout=10_000)

    look(1.0)
    addresses = next_scan("increased")
    # As a user narrows a scan: other floats of the world's that held the same number and rose too go when it has
    # stood still ("unchanged") and looks down ("decreased": looking up again may stop at the highest pitch).
    # Usually 1 is left at once; since painting the ground went lazy (the world's heap laid out otherwise), in 3
    # runs of 10 about 80 heap floats in rows of three rose with it and kept still with it, and looking down left 5.
    if len(addresses) >= 50:
        addresses = next_scan("unchanged")  # it stood still meanwhile
        look(-1.0)
        addresses = next_scan("decreased")
    assert pitch in addresses and len(addresses) < 50
    memory.table.selectRow(addresses.index(pitch))
    session.human_input(PadState(right_y=-1.0), 0.5)
    qtbot.waitUntil(lambda: memory.plot.count() >= 3, timeout=10_000)
    now = memory.table.item(addresses.index(pitch), 2)
    qtbot.waitUntil(lambda: now.text() not in ("", "None"), timeout=5_000)
    assert float(now.text()) == pytest.approx(truth.read()["camera_pitch"], abs=1e-3)
    assert panel.undo_button.isEnabled()
    panel.undo_button.click()
    qtbot.waitUntil(lambda: "undo" in panel.status.text(), timeout=60_000)


def test_a_bad_value_is_explained_in_the_panel(window, qtbot):
    panel = window.memory.scan_panel
    panel.type.setCurrentText("u8")
    qtbot.keyClicks(panel.first_value, "300")
    panel.first_button.click()
    assert "300 does not fit in u8" in panel.status.text()


def test_find_position_then_a_signature_saved_verified_and_tried(window, qtbot, builtin_profile, tmp_path):
    memory, finder = window.memory, window.memory.finder_panel
    truth = attach_ground_truth(window.session.host.world, builtin_profile)
    finder.find_button.click()
    assert finder.cancel_button.isEnabled() and not finder.find_button.isEnabled()
    qtbot.waitUntil(lambda: memory.found is not None and finder.find_button.isEnabled(), timeout=120_000)
    assert memory.found.candidates[0].address == truth.address + 24
    assert finder.candidates.count() >= 1 and finder.sign_button.isEnabled()
    finder.sign_button.click()
    qtbot.waitUntil(lambda: memory.built is not None and finder.find_button.isEnabled(), timeout=180_000)
    assert memory.built.ok, memory.built.message
    saved = tmp_path / "found.yaml"
    memory.save_profile(saved)
    assert load_profile(saved).signature.pattern.startswith("50 4B 47 59 4D")
    assert finder.try_button.isEnabled()
    finder.verify_button.click()
    qtbot.waitUntil(lambda: finder.find_button.isEnabled(), timeout=120_000)
    assert finder.status.text().startswith("Verified on a fresh game process")
    finder.try_button.click()
    assert not finder.find_button.isEnabled()
    qtbot.waitUntil(lambda: finder.find_button.isEnabled(), timeout=120_000)
    assert "followed the walk" in finder.status.text(), finder.status.text()
    assert finder.trajectory.points > 10  # the square walk, read through the saved profile's evaluator
    assert yaml.safe_load(saved.read_text())["fields"]["x"]["offset"] == 24


def test_a_search_can_be_cancelled(window, qtbot):
    memory, finder = window.memory, window.memory.finder_panel
    finder.find_button.click()
    qtbot.waitUntil(lambda: finder.progress.value() > 0, timeout=60_000)
    finder.cancel_button.click()
    qtbot.waitUntil(lambda: finder.find_button.isEnabled(), timeout=60_000)
    assert "cancelled" in finder.status.text() and memory.found is None


def test_candidates_of_an_old_process_are_dropped_when_the_game_restarts(window, qtbot):
    """Addresses mean nothing in another process: after a restart the tab follows the new one."""
    session, memory, panel = window.session, window.memory, window.memory.scan_panel
    old_pid = session.host.world.pid
    panel.type.setCurrentText("f32")
    panel.first_kind.setCurrentIndex(0)  # exact value
    qtbot.keyClicks(panel.first_value, "1")
    panel.first_button.click()
    qtbot.waitUntil(lambda: "first scan" in panel.status.text() or "rror" in panel.status.text(), timeout=60_000)
    assert memory.table.rowCount() > 0, panel.status.text()
    session.restart_world()
    qtbot.waitUntil(lambda: "process changed" in panel.status.text(), timeout=60_000)
    assert session.host.world.pid != old_pid and f"pid {session.host.world.pid}" in memory.attached.text()
    assert memory.rows == [] and memory.table.rowCount() == 0 and not panel.next_button.isEnabled()
