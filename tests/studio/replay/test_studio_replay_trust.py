"""Issue 11 in the Replay view (pytest-qt, offscreen, real HDF5 files): switching episodes never waits
for a label save, a slow folder never overwrites a newer one, the folder list fits and opens on one
click, a non-recording is named as such, captions are right on human steps, paths keep their file
name, exports land where expected, and the first label asks who is labelling."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtWidgets import QApplication, QFileDialog, QInputDialog, QMessageBox

from core.episode.synthetic import write_long_episode
from core.labels.store import read_labels
from core.recording.writer import EpisodeWriter
from studio.live_session import LiveSession
from studio.main_window import MainWindow
from studio.recording_bar import RecordingBar


def frames(count: int = 40, base: int = 10) -> list[np.ndarray]:
    return [np.full((36, 64, 3), base + i, np.uint8) for i in range(count)]


def open_episode(window, qtbot, path: Path) -> None:
    with qtbot.waitSignal(window.replay.sig_opened, timeout=20_000):
        window.open_path(str(path))


def test_switching_episodes_never_waits_for_a_label_save(window, qtbot, tmp_path, monkeypatch, request):
    first = write_long_episode(tmp_path / "a.h5", 40, frames(), seed=1)
    second = write_long_episode(tmp_path / "b.h5", 40, frames(), seed=2)
    import studio.replay.label_session as label_session

    disk_free = threading.Event()  # a slow disk: a save waits until the test lets it through
    real_save = label_session.save_labels
    monkeypatch.setattr(label_session, "save_labels", lambda path, labels: (disk_free.wait(30),
                                                                            real_save(path, labels)))
    failsafe = threading.Timer(20, disk_free.set)  # never hang the suite, even on a regression
    failsafe.start()
    request.addfinalizer(failsafe.cancel)  # and never leave the timer running after the test
    open_episode(window, qtbot, first)
    replay = window.replay
    replay.labels.set_category("Lost")  # an edit; its save is now held up by the disk
    assert replay.labels.editor.dirty
    open_episode(window, qtbot, second)  # the switch: the first episode's labels are saved behind it
    assert not disk_free.is_set(), "the switch waited for the label save"
    assert replay.episode.path == second
    disk_free.set()
    qtbot.waitUntil(lambda: "alice" in read_labels(first).annotators, timeout=20_000)
    assert read_labels(first).annotators["alice"].failure_category == "Lost"


def test_a_slow_folder_never_overwrites_a_newer_one(window, qtbot, tmp_path, monkeypatch, request):
    slow, fast = tmp_path / "slow", tmp_path / "fast"
    for index in range(3):
        write_long_episode(slow / f"s{index}.h5", 20, frames(20), seed=index)
    write_long_episode(fast / "f0.h5", 20, frames(20), seed=9)
    import studio.replay.folder_reader as folder_reader

    slow_done = threading.Event()
    real_load = folder_reader.load_episode_labels

    def load(path):
        if Path(path).parent == slow:
            slow_done.wait(30)  # the slow folder: held until the fast one is shown
        return real_load(path)

    monkeypatch.setattr(folder_reader, "load_episode_labels", load)
    failsafe = threading.Timer(20, slow_done.set)  # never hang the suite, even on a regression
    failsafe.start()
    request.addfinalizer(failsafe.cancel)
    episodes = window.replay.episodes
    window.open_path(str(slow))
    window.open_path(str(fast))
    qtbot.waitUntil(lambda: episodes.rows == 1, timeout=20_000)
    slow_done.set()
    qtbot.waitUntil(lambda: not any(t.is_alive() for t in episodes.reader._threads), timeout=20_000)
    QApplication.processEvents()
    assert episodes.rows == 1 and Path(episodes.path_at(0)).name == "f0.h5"
    assert str(fast) in episodes.folder_label.text()


def test_the_folder_list_fits_its_dock_and_one_click_opens_an_episode(window, qtbot, tmp_path):
    folder = tmp_path / "a_run_folder_with_a_rather_long_name"
    for index in range(3):
        write_long_episode(folder / f"20261201-101010__synthetic_long__goal_only__random_{index}.h5", 20,
                           frames(20), seed=index)
    episodes = window.replay.episodes
    window.open_path(str(folder))
    qtbot.waitUntil(lambda: episodes.rows == 3, timeout=20_000)
    shown = [episodes.model.headerData(c, Qt.Orientation.Horizontal) for c in range(episodes.model.columnCount())
             if not episodes.table.isColumnHidden(c)]
    assert shown == ["Task", "Result", "Labels"]
    assert not episodes.table.horizontalScrollBar().isVisible()
    rect = episodes.table.visualRect(episodes.proxy.index(1, 0))
    with qtbot.waitSignal(window.replay.sig_opened, timeout=20_000) as opened:
        qtbot.mouseClick(episodes.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert Path(opened.args[0]) == Path(episodes.path_at(1))


def test_a_file_that_is_not_a_recording_is_named_as_such(window, qtbot, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes on the run\n")
    with qtbot.waitSignal(window.replay.sig_open_failed, timeout=20_000) as failed:
        window.open_path(str(notes))
    assert "notes.txt is not a PokeGym recording" in failed.args[0]
    assert "notes.txt is not a PokeGym recording" in window.replay.message.text()


def human_episode(path: Path, units: str = "m") -> Path:
    """Three steps, as the runner records them: the agent's (pushed 1.5 by an intervention after it), a human's,
    an intervention's."""
    writer = EpisodeWriter(path, {"task_id": "t", "granularity": "goal_only", "agent": "random", "step_budget": 3,
                                  "position_units": units}, (36, 64, 3))
    for step, source in enumerate(("agent", "human", "intervention"), 1):
        record = {"action": "MoveForward" if source == "agent" else "HumanInput", "action_params": {},
                  "raw_reply": "", "thought": "", "self_assessment": "", "parse_error": None, "macro": [],
                  "usage": {}, "intervention": None, "memory": "", "reflection": "", "movement": source != "agent",
                  "intervention_displacement": 1.5 if step == 1 else 0.0}
        numbers = {"step": step, "time": float(step), "tick_before": step * 10, "tick_after": step * 10 + 10,
                   "latency_s": 0.0, "displacement": 1.0, "ineffective": 0, "source": source}
        writer.add_samples([{"time": float(step), "tick": step * 10, "map_id": 1, "x": float(step), "y": 0.0,
                             "z": 0.0, "facing": 0.0, "camera_yaw": 0.0, "camera_pitch": -12.0, "flags": 0,
                             "dialogue_active": 0}])
        writer.add_step(numbers, record, {"current": np.full((36, 64, 3), 30 * step, np.uint8)})
    writer.finish({"success": False, "steps_used": 3, "end_reason": "stopped", "error": None})
    return path


def test_the_step_caption_is_right_on_human_and_intervention_steps(window, qtbot, tmp_path):
    open_episode(window, qtbot, human_episode(tmp_path / "h.h5"))
    replay = window.replay
    captions = []
    for index in range(3):
        replay.seek(index)
        qtbot.waitUntil(lambda i=index: replay.shown_index == i, timeout=10_000)
        captions.append(replay.observations.caption.text())
    assert captions[0] == "Step 1: the agent was given the current frame only"
    assert captions[1].startswith("Step 2: a human drove") and "the agent was not asked" in captions[1]
    assert captions[2].startswith("Step 3: an intervention moved the character")


def test_a_push_is_told_in_the_games_own_units(window, qtbot, tmp_path):
    for units in ("nodes", "m"):
        open_episode(window, qtbot, human_episode(tmp_path / f"{units}.h5", units))
        told = f"Pushed\n1.5 {units} by the intervention"  # step 1's details, once this file's are shown
        qtbot.waitUntil(lambda told=told: told in window.replay.details.toPlainText(), timeout=10_000)


def test_a_long_recording_path_keeps_its_file_name_visible(qtbot, tmp_path):
    bar = RecordingBar()
    qtbot.addWidget(bar)
    bar.resize(420, 40)
    bar.show()
    path = "/home/someone/projects/pokegym/" + "very_long_folder_name/" * 6 + "20261201-101010__q08_site.h5"
    bar.set_recording(path, finished=True)
    shown = bar.label.text()
    assert shown.endswith("q08_site.h5") and "…" in shown and bar.label.toolTip().endswith(path)
    bar.close()


def test_exports_open_in_the_run_folder_and_add_the_extension(window, qtbot, tmp_path, monkeypatch):
    folder = tmp_path / "run"
    episode = write_long_episode(folder / "e.h5", 20, frames(20), seed=4)
    open_episode(window, qtbot, episode)
    window.replay.labels.set_category("Lost")
    episodes = window.replay.episodes
    window.open_path(str(folder))
    qtbot.waitUntil(lambda: episodes.rows == 1 and episodes.export.isEnabled(), timeout=20_000)
    asked = []

    def save_dialog(parent, title, start, filters):
        asked.append(start)
        return str(folder / "my_labels"), "JSON lines (*.jsonl)"  # typed without an extension

    monkeypatch.setattr(QFileDialog, "getSaveFileName", save_dialog)
    with qtbot.waitSignal(episodes.sig_status, check_params_cb=lambda text: text.startswith("Exported"),
                          timeout=20_000):
        episodes.export.click()
    assert Path(asked[0]).parent == folder
    assert (folder / "my_labels.jsonl").exists() and not (folder / "my_labels").exists()


def test_the_first_label_asks_for_the_annotators_name(qtbot, tmp_path, monkeypatch):
    QSettings.setPath(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, str(tmp_path / "settings"))
    monkeypatch.setenv("USER", "")
    main = MainWindow(LiveSession())
    main.setProperty("quiet", True)
    qtbot.addWidget(main)
    main.tabs.setCurrentWidget(main.replay)
    main.show()
    try:
        episode = write_long_episode(tmp_path / "e.h5", 20, frames(20), seed=4)
        open_episode(main, qtbot, episode)
        replay = main.replay
        assert replay.label_panel.annotator.text() == ""

        def answer() -> None:
            dialog = QApplication.activeModalWidget()
            assert isinstance(dialog, QInputDialog)
            dialog.setTextValue("bea")
            dialog.accept()

        QTimer.singleShot(0, answer)
        replay.labels.set_category("Lost")  # the first label: who is labelling?
        assert replay.label_panel.annotator.text() == "bea"
        qtbot.waitUntil(lambda: "bea" in read_labels(episode).annotators, timeout=20_000)
        assert "annotator" not in read_labels(episode).annotators
        assert QSettings("PokeGym", "Studio").value("replay/annotator") == "bea"
    finally:
        main.close()


@pytest.fixture
def full_disk(monkeypatch) -> threading.Event:
    """The disk boundary: while the event is set, a label save fails as a full disk makes it fail."""
    import studio.replay.label_session as label_session

    disk_full = threading.Event()
    disk_full.set()
    real_save = label_session.save_labels

    def save(path, labels):
        if disk_full.is_set():
            raise OSError(28, "No space left on device")
        return real_save(path, labels)

    monkeypatch.setattr(label_session, "save_labels", save)
    return disk_full


@pytest.fixture
def close_questions(window, monkeypatch) -> list[str]:
    """What closing the window asks (answered "No"); the window asks as it does for a user."""
    asked: list[str] = []
    monkeypatch.setattr(QMessageBox, "question", lambda parent, title, text, *rest: (
        asked.append(text), QMessageBox.StandardButton.No)[1])
    window.setProperty("quiet", False)
    return asked


@pytest.fixture
def two_episodes(tmp_path) -> tuple[Path, Path]:
    return (write_long_episode(tmp_path / "a.h5", 40, frames(), seed=1),
            write_long_episode(tmp_path / "b.h5", 40, frames(), seed=2))


def label_then_switch(window, qtbot, first: Path, second: Path) -> None:
    open_episode(window, qtbot, first)
    window.replay.labels.set_category("Lost")
    open_episode(window, qtbot, second)  # the first episode's save fails behind the switch
    qtbot.waitUntil(lambda: "a.h5 by alice not saved" in window.replay.label_panel.status.text(), timeout=20_000)


def test_labels_whose_save_failed_after_a_switch_are_kept_put_back_and_saved(window, qtbot, two_episodes, full_disk,
                                                                            close_questions):
    first, second = two_episodes
    replay = window.replay
    label_then_switch(window, qtbot, first, second)
    panel = replay.label_panel.status
    assert "No space left on device" in panel.text() and "kept" in panel.text()
    said = replay.status_message  # the status bar says it too, shortened to fit, whole in the tooltip
    assert said.isVisible() and "a.h5 by alice not saved" in said.full_text() and said.toolTip() == said.full_text()
    assert not replay.message.isVisible()  # the "Open an episode" hint is gone once one is open
    assert not window.close() and window.isVisible()  # quitting now would lose them: asked, and "No" stays
    assert len(close_questions) == 1 and "a.h5 (alice)" in close_questions[0]
    full_disk.clear()
    open_episode(window, qtbot, first)
    assert replay.labels.editor.labels.failure_category == "Lost"  # put back (its save may already run)
    qtbot.waitUntil(lambda: "alice" in read_labels(first).annotators, timeout=20_000)
    assert read_labels(first).annotators["alice"].failure_category == "Lost"
    qtbot.waitUntil(lambda: not replay.labels.editor.dirty, timeout=5_000)
    window.setProperty("quiet", True)
    assert replay.labels.flush() == []


def test_quitting_retries_labels_whose_save_failed_and_closes_once_they_are_saved(window, qtbot, two_episodes,
                                                                                   full_disk, close_questions):
    first, second = two_episodes
    label_then_switch(window, qtbot, first, second)
    full_disk.clear()  # the user freed some space, then quits
    assert window.close() and not close_questions  # tried once more before closing: saved, nothing to ask
    assert read_labels(first).annotators["alice"].failure_category == "Lost"


def test_another_annotators_failed_save_is_kept_not_claimed_by_the_open_editor(window, qtbot, two_episodes,
                                                                                full_disk):
    first, _ = two_episodes
    replay = window.replay
    open_episode(window, qtbot, first)
    replay.labels.set_category("Lost")
    replay.labelling.set_annotator("bob")  # same episode, another annotator: alice's labels are saved behind the switch
    qtbot.waitUntil(lambda: "by alice not saved" in replay.label_panel.status.text(), timeout=20_000)
    assert replay.labels.editor.labels.annotator == "bob" and not replay.labels.editor.dirty
    assert [line.split(":")[0] for line in replay.labels.flush()] == ["a.h5 (alice)"]
    full_disk.clear()
    assert replay.labels.flush() == []
    assert read_labels(first).annotators["alice"].failure_category == "Lost"
