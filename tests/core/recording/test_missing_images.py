"""A black image is a frame (Ryujinx's loading screens are black); a step without an image is marked as such in
the episode file, and Replay tells the two apart. Older files without the mark keep the old all-zeros rule."""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
import pytest

from core.recording.reader import EpisodeReader
from core.recording.writer import EpisodeWriter

SHAPE = (36, 64, 3)
BLACK = np.zeros(SHAPE, np.uint8)
GREY = np.full(SHAPE, 120, np.uint8)


def _numbers(step: int, source: str = "agent") -> dict:
    return {"step": step, "time": float(step), "tick_before": step * 15, "tick_after": step * 15 + 15,
            "latency_s": 0.1, "displacement": 0.0, "ineffective": 1, "source": source}


def write_loading_screen_episode(path: Path) -> Path:
    """Step 1: a black loading screen, no previous frame yet. Step 2: the game appears; the previous frame given
    to the agent is the black one. Step 3: a human step, black again, with no previous frame."""
    writer = EpisodeWriter(path, {"task_id": "loading"}, SHAPE, image_sets=("current", "previous"))
    writer.add_step(_numbers(1), {"action": "Wait"}, {"current": BLACK, "previous": None})
    writer.add_step(_numbers(2), {"action": "MoveForward"}, {"current": GREY, "previous": BLACK})
    writer.add_step(_numbers(3, "human"), {}, {"current": BLACK})
    writer.finish({"success": False, "steps_used": 3, "end_reason": "budget"})
    return path


def test_black_images_read_back_as_frames_and_missing_ones_as_none(tmp_path):
    path = write_loading_screen_episode(tmp_path / "loading.h5")
    with EpisodeReader(path) as episode:
        assert episode.marks_missing_images and episode.step_count == 3
        first = episode.step_image("current", 0)
        assert first is not None and first.shape == SHAPE and not first.any()  # black, and there
        assert episode.step_image("previous", 0) is None  # nothing before step 1
        given = episode.step_image("previous", 1)
        assert given is not None and not given.any()  # the black frame the agent was shown
        assert episode.step_image("current", 2) is not None and episode.step_image("previous", 2) is None


def test_a_file_from_before_the_mark_falls_back_to_all_zeros_means_none(tmp_path):
    path = write_loading_screen_episode(tmp_path / "old.h5")
    with h5py.File(path, "r+") as file:  # what the writer made before /steps/images_given existed
        del file["steps"]["images_given"]
    with EpisodeReader(path) as episode:
        assert not episode.marks_missing_images and episode.step_count == 3
        assert episode.step_image("current", 0) is None  # the documented limit of old files
        assert np.array_equal(episode.step_image("current", 1), GREY)


def test_a_step_whose_mark_was_never_written_is_not_counted(tmp_path):
    """A crash after the images but before the mark leaves that step incomplete: it is dropped, as a torn step."""
    path = write_loading_screen_episode(tmp_path / "torn.h5")
    with h5py.File(path, "r+") as file:
        file["steps"]["images_given"].resize(2, axis=0)
    with EpisodeReader(path) as episode:
        assert episode.step_count == 2


@pytest.fixture
def replay_window(qtbot, tmp_path):
    pytest.importorskip("pytestqt")
    from PySide6.QtCore import QSettings

    from studio.live_session import LiveSession
    from studio.main_window import MainWindow

    QSettings.setPath(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, str(tmp_path / "settings"))
    main = MainWindow(LiveSession())
    main.setProperty("quiet", True)
    qtbot.addWidget(main)
    main.tabs.setCurrentWidget(main.replay)  # no world starts: replay needs none
    main.show()
    yield main
    main.close()


def test_replay_shows_a_black_frame_and_leaves_a_missing_image_out(replay_window, qtbot, tmp_path):
    path = write_loading_screen_episode(tmp_path / "loading.h5")
    replay = replay_window.replay
    with qtbot.waitSignal(replay.sig_opened, timeout=20_000):
        replay_window.open_path(str(path))
    qtbot.waitUntil(lambda: replay.shown_index == 0, timeout=10_000)
    assert replay.observations.shown_kinds() == []  # step 1 had no previous frame

    replay.seek(1)
    qtbot.waitUntil(lambda: replay.shown_index == 1, timeout=10_000)
    assert int(replay.frame_view.current[0, 0, 0]) == 120
    assert replay.observations.shown_kinds() == ["previous"]  # the black previous frame is shown as given
    assert not replay.observations.thumbnails["previous"].pixels.any()

    replay.seek(0)
    qtbot.waitUntil(lambda: replay.shown_index == 0, timeout=10_000)
    assert replay.frame_view.current is not None and not replay.frame_view.current.any()  # black, not the grey kept
