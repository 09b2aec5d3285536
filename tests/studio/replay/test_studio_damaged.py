"""The Replay view on damaged files (pytest-qt, offscreen), each made from a real recording: a damaged
image costs only its step, the folder list shows damaged files with their reason, unreadable labels are
never saved over, and a file labels cannot be saved into says so as it opens, before any edit."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt

from core.labels.store import read_labels
from core.recording.reader import EpisodeReader
from studio.replay.episode_list import COLUMNS, DAMAGED_COLOUR
from tests.damaged_files import DAMAGE, STEPS, damaged_copy, delete_part, record_episode, sha


@pytest.fixture(scope="module")
def recording(tmp_path_factory) -> Path:
    return record_episode(tmp_path_factory.mktemp("recorded") / "episode.h5")


def open_episode(window, qtbot, path: Path) -> None:
    with qtbot.waitSignal(window.replay.sig_opened, timeout=20_000):
        window.open_path(str(path))
    qtbot.waitUntil(lambda: window.replay.shown_index == 0, timeout=10_000)


def press(window, qtbot, key) -> None:
    qtbot.keyClick(window.replay.timeline, key)


def test_one_damaged_image_costs_only_its_step(window, qtbot, recording, tmp_path):
    path = damaged_copy(recording, tmp_path, "image chunk")  # the image of step 3
    with EpisodeReader(recording) as original:
        images = [original.image("current", index) for index in range(STEPS)]
    open_episode(window, qtbot, path)
    replay = window.replay
    for index in [*range(STEPS), 2, 0]:  # every step, then back over the damaged one
        replay.seek(index)
        qtbot.waitUntil(lambda index=index: replay.shown_index == index, timeout=10_000)
        if index == 2:
            assert replay.frame_view.overlay_text("top_left") == "damaged image at step 3"
            assert replay.status_message.full_text().startswith("damaged image at step 3")
            assert not any(np.array_equal(replay.frame_view.current, image) for image in images)  # not a stale frame
        else:
            assert replay.frame_view.overlay_text("top_left") == ""
            assert "damaged" not in replay.status_message.full_text()
            assert np.array_equal(replay.frame_view.current, images[index])
    assert not replay.message.isVisible()  # nothing stopped the loader


def test_the_folder_list_shows_damaged_files_with_their_reason_and_lists_the_rest(window, qtbot, recording, tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    for name in ("a_good.h5", "b_good.h5"):
        shutil.copyfile(recording, folder / name)
    damaged = {damage: damaged_copy(recording, folder, damage)
               for damage in ("version [1, 2]", "no /steps", "truncated", "text renamed .h5")}
    unreadable_labels = damaged_copy(recording, folder, "both label copies")
    bad_image = damaged_copy(recording, folder, "image chunk")
    episodes = window.replay.episodes
    window.open_path(str(folder))
    qtbot.waitUntil(lambda: episodes.rows == 8, timeout=20_000)
    rows = {Path(episodes.path_at(row)).name: row for row in range(episodes.rows)}
    task_column = COLUMNS.index("Task")
    task = episodes.proxy.index(rows["a_good.h5"], task_column).data()  # rows are the sorted view's
    assert len(task) > 12
    # The task's name is shown whole, once the view has laid out its rows (ResizeToContents sizes at layout).
    qtbot.waitUntil(lambda: episodes.table.columnWidth(task_column) >=
                    episodes.table.fontMetrics().horizontalAdvance(task), timeout=5_000)
    column = {name: COLUMNS.index(name) for name in COLUMNS}
    for damage, path in damaged.items():
        assert episodes.proxy.index(rows[path.name], column["Result"]).data() == "damaged"
        reason = episodes.proxy.index(rows[path.name], column["Task"])  # read first, without scrolling
        assert reason.data().startswith(f"damaged: {DAMAGE[damage][1]}: "), (damage, reason.data())
        assert str(path) in reason.data(Qt.ItemDataRole.ToolTipRole)
        assert reason.data(Qt.ItemDataRole.ForegroundRole).color() == DAMAGED_COLOUR
    labels = episodes.proxy.index(rows[unreadable_labels.name], column["Labels"])
    assert labels.data() == "unreadable (damaged)" and "both stored copies" in labels.data(Qt.ItemDataRole.ToolTipRole)
    assert labels.data(Qt.ItemDataRole.ForegroundRole).color() == DAMAGED_COLOUR
    assert episodes.proxy.index(rows[unreadable_labels.name], column["Steps"]).data() == STEPS  # it still lists
    assert episodes.proxy.index(rows[bad_image.name], column["Labels"]).data() == "unlabelled"  # a normal episode
    assert "4 episodes; 4 damaged file(s) listed in red, 1 with unreadable labels" in episodes.folder_label.text()
    opened = []
    window.replay.sig_opened.connect(opened.append)
    episodes.current = str(folder / "a_good.h5")
    for _ in range(3):  # "next unlabelled" goes round the episodes that can be labelled, skipping the others
        with qtbot.waitSignal(window.replay.sig_opened, timeout=20_000):
            episodes.next_unlabelled.click()
    assert [Path(p).name for p in opened] == ["b_good.h5", bad_image.name, "a_good.h5"]


def test_an_episode_whose_two_label_copies_are_damaged_opens_and_is_never_saved_over(window, qtbot, recording,
                                                                                      tmp_path):
    path = damaged_copy(recording, tmp_path, "both label copies")
    digest = sha(path)
    open_episode(window, qtbot, path)
    replay = window.replay
    assert replay.episode is not None and len(replay.episode) == STEPS
    assert replay.labels_banner.isVisible() and "Labels can't be saved" in replay.labels_banner.text()
    assert "both stored copies of the labels are damaged" in replay.labels_banner.text()
    assert "Labels unreadable" in replay.label_panel.category_state.text()
    assert not replay.label_panel.category.isEnabled() and replay.labels.editor is None
    replay.timeline.setFocus()
    press(window, qtbot, Qt.Key.Key_BracketLeft)
    replay.seek(3)
    press(window, qtbot, Qt.Key.Key_BracketRight)
    window.close()  # closing saves anything unsaved: there must be nothing
    assert sha(path) == digest


def _try_to_label(window, qtbot) -> None:
    replay = window.replay
    replay.timeline.setFocus()
    replay.seek(1)
    press(window, qtbot, Qt.Key.Key_BracketLeft)
    replay.seek(3)
    press(window, qtbot, Qt.Key.Key_BracketRight)
    press(window, qtbot, Qt.Key.Key_U)


def test_a_read_only_file_says_labels_cannot_be_saved_as_it_opens(window, qtbot, recording, tmp_path):
    path = tmp_path / "episode.h5"
    shutil.copyfile(recording, path)
    path.chmod(0o444)
    digest = sha(path)
    open_episode(window, qtbot, path)
    replay = window.replay
    banner = replay.labels_banner  # already there when the episode opens, before any edit
    assert banner.isVisible() and banner.level == "warning"
    assert "Labels can't be saved" in banner.text() and "read-only" in banner.text()
    assert not replay.labels.editable and not replay.label_panel.category.isEnabled()
    assert "read-only" in replay.label_panel.status.text()
    _try_to_label(window, qtbot)
    assert not replay.labels.editor.dirty and all(span.pending for span in replay.labels.editor.spans)
    window.close()
    assert sha(path) == digest


def test_a_read_only_folder_blocks_labels_only_where_saving_needs_the_folder(window, qtbot, recording, tmp_path):
    folder = tmp_path / "archive"
    folder.mkdir()
    current, older = folder / "current.h5", folder / "older.h5"
    shutil.copyfile(recording, current)
    shutil.copyfile(recording, older)
    delete_part(older, "labels/slots")  # recorded before the slots: its first save writes a copy beside it
    folder.chmod(0o555)
    try:
        digest = sha(older)
        open_episode(window, qtbot, older)
        replay = window.replay
        assert replay.labels_banner.isVisible() and str(folder) in replay.labels_banner.text()
        assert "read-only" in replay.labels_banner.text() and not replay.labels.editable
        _try_to_label(window, qtbot)
        assert sha(older) == digest
        open_episode(window, qtbot, current)  # its slots are written in place: the folder does not matter
        assert not replay.labels_banner.isVisible() and replay.labels.editable
        _try_to_label(window, qtbot)
        qtbot.waitUntil(lambda: not replay.labels.editor.dirty, timeout=10_000)
        saved = read_labels(current).annotators["alice"]
        assert [(s.start, s.end, s.kind) for s in saved.spans if not s.pending] == [(2, 4, "unaware")]
    finally:
        folder.chmod(0o755)
