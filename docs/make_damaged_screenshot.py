"""Regenerate the README's damaged-files screenshot: a real recording, copies of it damaged on disk, the
folder listed in Replay and one read-only episode open on its damaged image.

    QT_QPA_PLATFORM=offscreen python docs/make_damaged_screenshot.py [--keep FOLDER]

--keep leaves the damaged folder there (to look at it in the studio yourself: `python main.py replay FOLDER`).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget

from core.agents.observe import ObservationOptions
from studio.qt_wait import spin_until
from studio.scripted import open_studio, save_and_close
from tests.damaged_files import damaged_copy, flip_image_chunk, record_episode

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "images" / "studio_replay_damaged.png"


def make_folder(folder: Path) -> Path:
    """The damaged run folder; returns the episode to open (a damaged image at step 3, and read-only)."""
    recording = record_episode(folder / ".recording.h5", steps=8,
                               observation=ObservationOptions(previous_frame=True, side_views=True))
    runs = folder / "run"
    runs.mkdir()
    for name in ("q08_goal_t0.h5", "q08_goal_t1.h5"):
        shutil.copyfile(recording, runs / name)
    for damage in ("version [1, 2]", "no /steps", "truncated", "text renamed .h5", "both label copies"):
        damaged_copy(recording, runs, damage)
    opened = runs / "q08_goal_t2.h5"
    shutil.copyfile(recording, opened)
    flip_image_chunk(opened, 2)
    opened.chmod(0o444)
    recording.unlink()
    return opened


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep", type=Path, help="make the damaged folder here and leave it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        opened = make_folder(folder)
        app, window = open_studio(size=(1600, 940), connect=False)
        replay = window.replay
        window.open_path(str(opened.parent))
        spin_until(lambda: replay.episodes.rows == 9, 60)
        window.open_path(str(opened))
        spin_until(lambda: replay.episode is not None and replay.shown_index == 0, 60)
        replay.seek(2)
        spin_until(lambda: replay.shown_index == 2, 10)
        dock = replay.findChild(QDockWidget, "replay-dock-Episodes")
        replay.resizeDocks([dock], [640], Qt.Orientation.Horizontal)  # room for the damaged files' reasons
        save_and_close(app, window, OUT, settle_s=1.5)
        if args.keep is None:
            opened.chmod(0o644)  # so the scratch folder can be removed


if __name__ == "__main__":
    main()
