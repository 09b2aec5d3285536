"""`python main.py backend new` on real Minetest under our own Xvfb: the command finds W, S, A, D, space and mouse
look from frames alone, writes a backend file that validates, and that file then drives the game through the
normal backend path.

One scaffold run serves the module. Ground truth for the last test only: the TEST-ONLY world mod
(tests/data/minetest_truth) writes the player's yaw, which the scaffold never sees.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from core.backends.profile import load_backend
from core.game.external.game import ExternalGame
from core.game.external.launcher import free_udp_port
from core.game.pad import PadState
from core.paths import PROJECT_ROOT
from tests.minetest_support import minetest_missing, require_minetest_in_ci, settled_truth

require_minetest_in_ci()
pytestmark = pytest.mark.skipif(minetest_missing(), reason="minetest and Xvfb are needed (apt-get install -y "
                                                          "minetest xvfb)")
ASSETS = PROJECT_ROOT / "assets" / "backends" / "minetest"
TRUTH_MOD = PROJECT_ROOT / "tests" / "data" / "minetest_truth"


def _game_folder(folder: Path) -> str:
    """A Minetest install of the user's: config, world (with the test's truth mod) and home; the command line."""
    config = (ASSETS / "minetest.conf").read_text()
    for key, value in {"{width}": "640", "{height}": "360", "{sound}": "false"}.items():
        config = config.replace(key, value)
    (folder / "minetest.conf").write_text(config)
    shutil.copytree(ASSETS / "world", folder / "world")
    shutil.copytree(TRUTH_MOD, folder / "world" / "worldmods" / "pokegym_truth")
    (folder / "home").mkdir()
    return (f"minetest --config {folder}/minetest.conf --go --world {folder}/world --gameid minetest --name tester "
            f"--logfile {folder}/minetest.log --port {free_udp_port()}")


@pytest.fixture(scope="module")
def scaffolded(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path, Path]:
    folder = tmp_path_factory.mktemp("my_minetest")
    command = _game_folder(folder)
    out = folder / "my_minetest.yaml"
    done = subprocess.run(
        [sys.executable, "main.py", "backend", "new", "my_minetest", "--command", command,
         "--env", f"HOME={folder}/home", "--env", f"MESA_SHADER_CACHE_DIR={folder}/home/mesa",
         "--fov", "72", "--fov-vertical", "--out", str(out)],
        cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=240,
        env={**os.environ, "PATH": os.environ.get("PATH", "") + ":/usr/games"})
    return done, out, folder


def test_it_finds_wasd_space_and_mouse_look_and_writes_a_file_that_validates(scaffolded):
    done, out, _ = scaffolded
    assert done.returncode == 0, done.stdout + done.stderr
    backend = load_backend(out)  # the project's own loader
    assert backend.memory_profile is None and backend.kind == "external"
    spec = backend.external
    assert spec is not None and spec.input.keyboard is not None and spec.input.keyboard.left_stick is not None
    stick = spec.input.keyboard.left_stick
    assert (stick.up, stick.down, stick.left, stick.right) == ("w", "s", "a", "d"), done.stdout
    assert spec.input.keyboard.buttons.get("A") == "space"
    assert spec.input.mouse is not None, done.stdout  # what it measured, on failure
    # minetest.conf's mouse_sensitivity 0.2 is 0.2 degrees per pixel; the 72 deg vertical field of view converts.
    assert spec.input.mouse.degrees_per_px == pytest.approx(0.2, rel=0.15)
    assert spec.input.mouse.invert_y is False
    assert spec.frames.window_title.startswith("^Minetest 5\\.6\\.1")
    assert backend.step_settle_s > 0
    text = out.read_text()  # every measured value says how it was measured
    assert "# w: forward:" in text and "# space: jump:" in text
    assert "degrees_per_px: the angle most upper (far) corners agreed the view turned" in text
    assert "# ready: the window showed" in text and "# the picture rested" in text


def test_it_says_which_windows_it_saw_what_to_check_and_what_to_run_next(scaffolded):
    done, out, _ = scaffolded
    assert "windows: 'Minetest 5.6.1" in done.stdout
    assert "the game's window: 'Minetest 5.6.1" in done.stdout
    assert "check by eye:" in done.stdout and "start_states" in done.stdout
    assert f"python main.py memory find-position --backend {out}" in done.stdout


def test_the_written_file_drives_the_game_through_the_backend_path(scaffolded):
    done, out, folder = scaffolded
    assert done.returncode == 0, done.stderr
    backend = load_backend(out)
    assert backend.external is not None
    with ExternalGame.launch(backend.external, backend.name, backend.directory) as game:
        before = game.latest_frame().pixels
        x0, y0, _, yaw0 = settled_truth(folder)
        game.turn_camera(90.0)  # by the mouse settings the scaffold measured
        *_, yaw1 = settled_truth(folder)
        game.hold(PadState(left_y=1.0), 0.6)  # W, as the scaffold found it
        x1, y1, _, _ = settled_truth(folder)
        after = game.latest_frame().pixels
    turned = (yaw0 - yaw1 + 180) % 360 - 180  # Minetest's yaw grows to the left
    assert turned == pytest.approx(90, abs=12)
    assert math.hypot(x1 - x0, y1 - y0) > 1.0
    assert float(abs(after.astype(int) - before.astype(int)).mean()) > 5


def test_it_says_in_one_line_when_the_game_exits_at_once(tmp_path):
    done = subprocess.run([sys.executable, "main.py", "backend", "new", "quitter", "--command", "sh -c 'exit 3'",
                           "--out", str(tmp_path / "quitter.yaml")],
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: the game exited with status 3"), done.stderr
    assert "try its command in a terminal" in lines[0] or "terminal" in lines[0]
    assert not (tmp_path / "quitter.yaml").exists()
