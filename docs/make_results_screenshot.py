"""Regenerate the README's Results screenshot from a real run folder (two random agents, three tasks, all
granularities): `python docs/make_results_screenshot.py` (under Xvfb: QT_QPA_PLATFORM=xcb, or offscreen)."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from studio.qt_wait import spin_until
from studio.scripted import open_studio, save_and_close

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "images" / "studio_results.png"
TASKS = "q08_site_navigation,q04_clock_interaction,q02_badge_navigation"


def record(folder: Path) -> Path:
    out = folder / "run"
    for agent in ("random:1", "random:2"):
        subprocess.run([sys.executable, "main.py", "run", "--tasks", TASKS, "--granularity", "all", "--agent", agent,
                        "--budget", "20", "--workers", "2", "--intervention", "physical", "--out", str(out)],
                       cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return out


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        run = record(Path(folder))
        app, window = open_studio(connect=False)
        window.tabs.setCurrentWidget(window.results)
        window.results.open_folder(run)
        spin_until(lambda: window.results.report is not None, 60)
        save_and_close(app, window, OUT, settle_s=1.5)


if __name__ == "__main__":
    main()
