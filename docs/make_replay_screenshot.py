"""Regenerate the README's Replay screenshot from a real recorded episode with labelled spans:
`QT_QPA_PLATFORM=offscreen python docs/make_replay_screenshot.py`."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from studio.live_session import LiveSession
from studio.main_window import MainWindow
from studio.qt_wait import spin_until

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "images" / "studio_replay.png"


def record(folder: Path) -> Path:
    subprocess.run([sys.executable, str(ROOT / "main.py"), "run", "--tasks", "q05_lookout_navigation",
                    "--agent", "random:4", "--budget", "90", "--side-views", "--previous-frame",
                    "--intervention", "physical", "--frames-every", "10", "--out", str(folder)], check=True)
    return next((folder / "episodes").glob("*.h5"))


def main() -> None:
    app = QApplication.instance() or QApplication(sys.argv)
    with tempfile.TemporaryDirectory() as folder:
        QSettings.setPath(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, str(Path(folder) / "settings"))
        QSettings("PokeGym", "Studio").setValue("replay/annotator", "alice")
        episode = record(Path(folder) / "run")
        window = MainWindow(LiveSession())
        window.resize(1600, 940)
        window.show()
        window.open_path(str(episode))
        replay = window.replay
        spin_until(lambda: replay.episode is not None and replay.shown_index == 0, 60)
        editor = replay.labels.editor
        if editor.spans:
            replay.labels.select(0)
            replay.labels.set_kind("unaware")
        if len(editor.spans) > 1:
            replay.labels.select(1)
            replay.labels.set_kind("aware")
            replay.labels.awareness_here(editor.spans[1].start)
        target = editor.spans[0].start if editor.spans else 20
        replay.seek_step(target)
        replay.timeline.zoom(1.5)
        spin_until(lambda: replay.shown_index == replay.cursor, 10)
        spin_until(lambda: False, 1.5)  # autosave and repaint
        window.grab().save(str(OUT))
        print(f"wrote {OUT}")
        window.close()
        app.processEvents()


if __name__ == "__main__":
    main()
