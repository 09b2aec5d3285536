"""The Replay view (pytest-qt, offscreen): opening episodes and folders, frame-exact seeking by step,
keys, playback, and deadlock labels that survive saving, reopening and undo."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QMimeData, QPoint, QPointF, QSettings, Qt, QUrl
from PySide6.QtGui import QDropEvent, QKeySequence
from PySide6.QtWidgets import QApplication, QDialogButtonBox

from core.episode.synthetic import write_long_episode
from core.labels.store import read_labels
from studio.live_session import LiveSession
from studio.main_window import MainWindow
from studio.replay.keymap import load_keys, save_keys

STEPS = 120


def frames() -> list[np.ndarray]:
    # Each frame's brightness encodes its index, so a test can tell which step is on screen.
    return [np.full((36, 64, 3), 10 + i, np.uint8) for i in range(STEPS)]


@pytest.fixture
def episode_file(tmp_path) -> Path:
    return write_long_episode(tmp_path / "runs" / "episode_a.h5", STEPS, frames(), seed=3)


def open_episode(window, qtbot, path: Path) -> None:
    with qtbot.waitSignal(window.replay.sig_opened, timeout=20_000):
        window.open_path(str(path))
    qtbot.waitUntil(lambda: window.replay.shown_index == 0, timeout=10_000)


def shown_brightness(window) -> int:
    return int(window.replay.frame_view.current[0, 0, 0])


def press(window, qtbot, key, modifier=Qt.KeyboardModifier.NoModifier) -> None:
    qtbot.keyClick(window.replay.timeline, key, modifier)


def test_an_episode_opens_on_its_first_step_with_every_pane(window, qtbot, episode_file):
    open_episode(window, qtbot, episode_file)
    replay = window.replay
    assert window.tabs.currentWidget() is replay
    assert replay.timeline.count == STEPS and replay.cursor == 0
    assert shown_brightness(window) == 10  # step 1's image
    assert "Step" in replay.details.toPlainText() and "MoveForward" in replay.details.toPlainText()
    assert replay.trajectory.points > 0
    assert replay.metrics.labels["step"].text().startswith("Step 1 /")
    qtbot.waitUntil(lambda: str(episode_file) in window.recent(), timeout=2_000)  # written just after


def test_the_map_names_the_units_the_episode_was_recorded_in(window, qtbot, tmp_path):
    """A game's own units (Red Eclipse's), then a game whose profile names none: the axes follow each file."""
    for units, label in (("units", "x (units)"), (None, "x"), ("m", "x (m)")):
        path = write_long_episode(tmp_path / f"in_{units}.h5", 12, frames()[:12], seed=3, position_units=units)
        open_episode(window, qtbot, path)
        assert window.replay.trajectory.getAxis("bottom").labelText == label


def test_keys_step_jump_and_seek_by_step_index(window, qtbot, episode_file):
    open_episode(window, qtbot, episode_file)
    replay = window.replay
    replay.timeline.setFocus()
    press(window, qtbot, Qt.Key.Key_Right)
    qtbot.waitUntil(lambda: replay.shown_index == 1)
    assert shown_brightness(window) == 11 and replay.current_step == 2
    press(window, qtbot, Qt.Key.Key_Right, Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: replay.shown_index == 11)
    assert shown_brightness(window) == 21
    press(window, qtbot, Qt.Key.Key_End)
    qtbot.waitUntil(lambda: replay.shown_index == STEPS - 1)
    press(window, qtbot, Qt.Key.Key_Left, Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: replay.shown_index == STEPS - 11)
    press(window, qtbot, Qt.Key.Key_Home)
    qtbot.waitUntil(lambda: replay.shown_index == 0)
    first_candidate = replay.labels.editor.spans[0].start
    press(window, qtbot, Qt.Key.Key_N)
    assert replay.current_step == first_candidate
    assert replay.labels.selected == 0


def test_space_plays_and_pauses(window, qtbot, episode_file):
    open_episode(window, qtbot, episode_file)
    replay = window.replay
    replay.speed.setCurrentText("8×")
    replay.timeline.setFocus()
    press(window, qtbot, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: replay.cursor >= 5, timeout=5_000)
    press(window, qtbot, Qt.Key.Key_Space)
    stopped_at = replay.cursor
    assert not replay.play_timer.isActive() and replay.play_button.text() == "Play"
    qtbot.wait(200)  # nothing may move once paused (a fixed interval, not waiting for an event)
    assert replay.cursor == stopped_at


def test_labels_round_trip_through_save_and_reopen_including_undo(window, qtbot, episode_file):
    open_episode(window, qtbot, episode_file)
    replay = window.replay
    replay.timeline.setFocus()
    replay.seek_step(30)
    press(window, qtbot, Qt.Key.Key_BracketLeft)
    replay.seek_step(34)
    press(window, qtbot, Qt.Key.Key_BracketRight)
    editor = replay.labels.editor
    added = next(i for i, s in enumerate(editor.spans) if (s.start, s.end) == (30, 34))
    assert replay.labels.selected == added
    press(window, qtbot, Qt.Key.Key_A)
    assert editor.spans[added].kind == "aware"
    replay.seek_step(32)
    press(window, qtbot, Qt.Key.Key_W)
    assert editor.spans[added].awareness_step == 32
    press(window, qtbot, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # undo the awareness step
    assert editor.spans[added].awareness_step is None and editor.spans[added].kind == "aware"
    replay.label_panel.category.setCurrentText("Aware Deadlock")
    replay.label_panel._category_chosen(replay.label_panel.category.currentIndex())
    qtbot.waitUntil(lambda: not editor.dirty, timeout=10_000)  # autosaved off the GUI thread
    saved = read_labels(episode_file).annotators["alice"]
    assert [(s.start, s.end, s.kind) for s in saved.spans if not s.pending] == [(30, 34, "aware")]
    assert saved.failure_category == "Aware Deadlock" and saved.category_confirmed and saved.updated
    window.close()
    again = MainWindow(LiveSession())
    qtbot.addWidget(again)
    again.tabs.setCurrentWidget(again.replay)
    again.show()
    open_episode(again, qtbot, episode_file)
    reopened = again.replay.labels.editor.labels
    assert [(s.start, s.end, s.kind) for s in reopened.spans if not s.pending] == [(30, 34, "aware")]
    again.close()


def test_dragging_a_span_edge_on_the_timeline_trims_it(window, qtbot, episode_file):
    open_episode(window, qtbot, episode_file)
    replay = window.replay
    timeline = replay.timeline
    span = replay.labels.editor.spans[0]
    y = int(timeline._span_row().center().y())
    start_x = round(timeline._x(replay.episode.index_of(span.start)))
    target_x = round(timeline._x(replay.episode.index_of(span.start) + 1))
    qtbot.mousePress(timeline, Qt.MouseButton.LeftButton, pos=QPoint(start_x, y))
    qtbot.mouseMove(timeline, QPoint(target_x, y))
    qtbot.mouseRelease(timeline, Qt.MouseButton.LeftButton, pos=QPoint(target_x, y))
    trimmed = replay.labels.editor.spans[0]
    assert (trimmed.start, trimmed.end) == (span.start + 1, span.end)
    assert trimmed.origin == "human" and not trimmed.pending


def test_clicking_the_trajectory_seeks_to_that_step(window, qtbot, episode_file):
    open_episode(window, qtbot, episode_file)
    replay = window.replay
    plot = replay.trajectory
    target = 70
    x, y = replay.episode.positions[replay.episode.index_of(target)]
    QApplication.processEvents()  # let the plot lay out its axes before mapping data to pixels
    scene = plot.plotItem.vb.mapViewToScene(QPointF(x, y))
    widget_pos = plot.mapFromScene(scene)
    qtbot.mouseClick(plot.viewport(), Qt.MouseButton.LeftButton, pos=widget_pos)
    assert replay.episode.positions[replay.cursor] == pytest.approx((x, y), abs=0.5)


def test_a_remapped_key_works(window, qtbot, episode_file, settings):
    keys = load_keys(QSettings("PokeGym", "Studio"))
    keys["step_forward"] = QKeySequence("D")
    save_keys(QSettings("PokeGym", "Studio"), keys)
    window.replay.apply_keys(load_keys(QSettings("PokeGym", "Studio")))
    open_episode(window, qtbot, episode_file)
    window.replay.timeline.setFocus()
    press(window, qtbot, Qt.Key.Key_D)
    assert window.replay.cursor == 1
    assert ("D", "Replay — next step") in window.shortcut_rows()


@pytest.mark.parametrize("damage", ["truncated", "garbage", "future_version"])
def test_a_damaged_file_opens_with_a_clear_message_and_is_never_modified(window, qtbot, episode_file, damage):
    if damage == "truncated":
        data = episode_file.read_bytes()
        episode_file.write_bytes(data[:len(data) // 3])
    elif damage == "garbage":
        episode_file.write_bytes(b"not an hdf5 file at all" * 100)
    else:
        with h5py.File(episode_file, "r+") as handle:
            handle.attrs["format_version"] = 99
    before = hashlib.sha256(episode_file.read_bytes()).hexdigest()
    with qtbot.waitSignal(window.replay.sig_open_failed, timeout=20_000) as failed:
        window.open_path(str(episode_file))
    message = failed.args[0]
    assert str(episode_file) in message
    expected = {"truncated": "cannot open", "garbage": "cannot open", "future_version": "update PokeGym Studio"}
    assert expected[damage] in message
    assert window.replay.message.isVisible() and "Cannot open" in window.replay.message.text()
    assert hashlib.sha256(episode_file.read_bytes()).hexdigest() == before


def test_a_folder_lists_episodes_filters_and_finds_the_next_unlabelled(window, qtbot, tmp_path, episode_file):
    folder = episode_file.parent
    write_long_episode(folder / "episode_b.h5", 40, frames()[:40], seed=5)
    write_long_episode(folder / "episode_c.h5", 40, frames()[:40], seed=6)
    (folder / "broken.h5").write_bytes(b"junk")
    open_episode(window, qtbot, episode_file)  # label episode_a, so it is no longer "unlabelled"
    window.replay.label_panel.category.setCurrentText("Lost")
    window.replay.label_panel._category_chosen(window.replay.label_panel.category.currentIndex())
    qtbot.waitUntil(lambda: not window.replay.labels.editor.dirty, timeout=10_000)
    episodes = window.replay.episodes
    window.open_path(str(folder))
    qtbot.waitUntil(lambda: episodes.rows == 4, timeout=20_000)  # the broken file is listed, as damaged
    assert "3 episodes; 1 damaged file(s)" in episodes.folder_label.text()
    labels_column = {Path(episodes.path_at(r)).name: episodes.proxy.index(r, 2).data() for r in range(4)}
    assert labels_column["episode_a.h5"] == "alice" and labels_column["episode_b.h5"] == "unlabelled"
    broken = next(r for r in range(4) if Path(episodes.path_at(r)).name == "broken.h5")
    assert episodes.proxy.index(broken, 0).data().startswith("damaged: file: cannot open it as HDF5")
    assert episodes.proxy.index(broken, 1).data() == "damaged"
    episodes.filter.setText("alice")
    assert episodes.rows == 1
    episodes.filter.setText("")
    episodes.current = str(episode_file)
    with qtbot.waitSignal(window.replay.sig_opened, timeout=20_000) as opened:
        episodes.next_unlabelled.click()
    assert Path(opened.args[0]).name == "episode_b.h5"


def test_dropping_a_file_on_the_window_opens_it(window, qtbot, episode_file):
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(episode_file))])
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton,
                       Qt.KeyboardModifier.NoModifier)
    with qtbot.waitSignal(window.replay.sig_opened, timeout=20_000):
        window.dropEvent(event)
    assert window.tabs.currentWidget() is window.replay


def test_the_replay_command_refuses_a_missing_path():
    done = subprocess.run([sys.executable, "main.py", "replay", "no/such/episode.h5"], capture_output=True,
                          text=True, cwd=Path(__file__).resolve().parents[3], timeout=60)
    assert done.returncode == 2 and "does not exist" in done.stderr


def test_labels_of_a_folder_export_and_show_agreement(window, qtbot, episode_file):
    import csv

    from studio.replay.agreement_dialog import AgreementDialog

    open_episode(window, qtbot, episode_file)
    replay = window.replay
    replay.labels.select(0)
    replay.labels.set_kind("unaware")
    replay.label_panel.category.setCurrentText("Unaware Deadlock")
    replay.label_panel._category_chosen(replay.label_panel.category.currentIndex())
    qtbot.waitUntil(lambda: not replay.labels.editor.dirty, timeout=10_000)
    episodes = replay.episodes
    window.open_path(str(episode_file.parent))
    qtbot.waitUntil(lambda: episodes.rows == 1 and episodes.export.isEnabled(), timeout=20_000)
    out = episode_file.parent.parent / "labels.csv"
    with qtbot.waitSignal(episodes.sig_status, check_params_cb=lambda text: text.startswith("Exported"),
                          timeout=20_000) as status:
        episodes.export_to(out, "csv")
    assert str(out) in status.args[0]
    rows = list(csv.DictReader(out.read_text().splitlines()))
    assert any(r["annotator"] == "alice" and r["span_kind"] == "unaware" for r in rows)
    dialog = AgreementDialog(episode_file.parent)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.compute.isEnabled(), timeout=20_000)
    assert dialog.first.currentText() == "alice" and dialog.second.currentText() == "automatic suggestion"
    assert "Failure category: kappa" in dialog.summary.text() and "Deadlock steps" in dialog.summary.text()
    dialog.show()
    with qtbot.waitSignal(dialog.finished, timeout=5_000):
        dialog.buttons.button(QDialogButtonBox.StandardButton.Close).click()  # no title bar needed to close it
    assert not dialog.isVisible()


def test_typing_a_note_keeps_return_and_survives_autosave(window, qtbot, episode_file):
    open_episode(window, qtbot, episode_file)
    replay = window.replay
    replay.labels.select(0)
    assert replay.labels.editor.spans[0].pending
    note = replay.label_panel.note
    note.setFocus()
    qtbot.keyClicks(note, "walks into the sea wall")
    qtbot.keyClick(note, Qt.Key.Key_Return)  # saves the note; must not fire the "accept" shortcut first
    span = replay.labels.editor.spans[0]
    assert span.note == "walks into the sea wall" and note.text() == "walks into the sea wall"
    qtbot.waitUntil(lambda: not replay.labels.editor.dirty, timeout=10_000)
    assert read_labels(episode_file).annotators["alice"].spans[0].note == "walks into the sea wall"


def test_seeking_while_playing_plays_on_from_the_new_step(window, qtbot, episode_file):
    open_episode(window, qtbot, episode_file)
    replay = window.replay
    replay.speed.setCurrentText("0.25×")  # a step every two seconds: the cursor stays where it is put
    replay.toggle_play()
    replay.seek(80)
    qtbot.waitUntil(lambda: replay.shown_index == 80)
    qtbot.wait(300)  # the playback clock ticks every 15 ms meanwhile (a fixed interval, no event to wait for)
    assert replay.cursor >= 80
    replay.toggle_play()


def test_damaged_settings_do_not_stop_the_studio_from_opening(qtbot, settings):
    stored = QSettings("PokeGym", "Studio")
    for key, value in (("version", "abc"), ("recent", 5), ("geometry", "garbage"), ("live/state", 7),
                       ("replay/state", "x"), ("live/budget", "100000000000000000000"),
                       ("replay/keys/step_forward", "Ctrl+Foo+Bar")):
        stored.setValue(key, value)
    stored.sync()
    main = MainWindow(LiveSession())
    qtbot.addWidget(main)
    assert main.recent() == [] and main.replay.key_actions["step_forward"].shortcut().toString() == "Right"
    stored.setValue("version", 2)
    stored.sync()
    again = MainWindow(LiveSession())
    qtbot.addWidget(again)
    assert again.live.controls.budget.value() == again.live.controls.budget.maximum()


def test_playback_shows_the_frames_recorded_between_steps(window, qtbot, tmp_path):
    path = write_long_episode(tmp_path / "with_frames.h5", 20, frames()[:20], frames_per_step=3)
    open_episode(window, qtbot, path)
    replay = window.replay
    assert replay.sub_frames.isVisible() and replay.sub_frames.maximum() == 3
    replay.sub_frames.setValue(2)  # scrub within step 1
    qtbot.waitUntil(lambda: shown_brightness(window) == 250, timeout=5_000)
    replay.seek(0)
    qtbot.waitUntil(lambda: shown_brightness(window) == 10, timeout=5_000)
    replay.speed.setCurrentText("0.25×")  # two seconds a step: the in-between frames have time to show
    replay.toggle_play()
    qtbot.waitUntil(lambda: replay.cursor == 0 and shown_brightness(window) == 250, timeout=5_000)
    replay.toggle_play()
