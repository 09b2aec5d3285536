"""`python main.py backend new` on the built-in world shown in a window of its own (tests/fake_games/world_window.py:
a real 3D picture, a desktop game's keys and mouse look, nothing of PokeGym's backends), and the one-line errors for
a window that is not there and a window where nothing moves.

One scaffold run serves the module; each program runs under the command's own Xvfb.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from core.backends.profile import load_backend
from core.game.external.game import ExternalGame
from core.game.external.xvfb import Xvfb
from core.game.pad import PadState
from core.paths import PROJECT_ROOT

WORLD_WINDOW = PROJECT_ROOT / "tests" / "fake_games" / "world_window.py"
COMMAND = f"{sys.executable} {WORLD_WINDOW}"
pytestmark = pytest.mark.skipif(shutil.which("Xvfb") is None, reason="Xvfb is needed (apt-get install -y xvfb)")


def _new(name: str, folder: Path, *options: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "main.py", "backend", "new", name, *options,
                           "--out", str(folder / f"{name}.yaml")],
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def scaffolded(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    folder = tmp_path_factory.mktemp("town")
    return _new("town_window", folder, "--command", COMMAND, "--fov", "70"), folder / "town_window.yaml"


def test_it_finds_the_walk_keys_and_the_mouse_turn_of_a_third_person_camera(scaffolded):
    done, out = scaffolded
    assert done.returncode == 0, done.stdout + done.stderr
    backend = load_backend(out)
    spec = backend.external
    assert spec is not None and spec.input.keyboard is not None and spec.input.keyboard.left_stick is not None
    stick = spec.input.keyboard.left_stick
    assert (stick.up, stick.down) == ("w", "s")
    assert (stick.left, stick.right) == ("a", "d")  # they walk the character sideways
    assert spec.input.mouse is not None, done.stdout + out.read_text()  # what it measured, and why it wrote none
    # The window turns the camera 0.25 degrees per pixel; the camera orbits the character, so only the far
    # corners turn by the whole angle: within 20%.
    assert spec.input.mouse.degrees_per_px == pytest.approx(0.25, rel=0.2)
    assert spec.input.mouse.invert_y is False
    assert spec.frames.window_title == "^PokeGym Town$"
    assert spec.input.keyboard.buttons == {}  # the town has no jump, and the file does not invent one
    assert "no key was found to jump" in done.stdout


def test_the_written_file_starts_the_window_game_through_the_backend_path(scaffolded):
    done, out = scaffolded
    assert done.returncode == 0, done.stderr
    backend = load_backend(out)
    assert backend.external is not None
    with ExternalGame.launch(backend.external, backend.name, backend.directory) as game:
        before = game.latest_frame().pixels.astype(np.int16)
        game.hold(PadState(left_y=1.0), 0.6)
        walked = game.latest_frame().pixels.astype(np.int16)
        game.turn_camera(90.0)
        turned = game.latest_frame().pixels.astype(np.int16)
    assert float(np.abs(walked - before).mean()) > 3
    assert float(np.abs(turned - walked).mean()) > 10


def test_a_window_regex_that_matches_nothing_lists_the_windows_there_are(tmp_path):
    done = _new("nope", tmp_path, "--command", COMMAND, "--window", "^Nope", timeout=90)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "no window titled like '^Nope' (--window)" in lines[0]
    assert "'PokeGym Town' (pid " in lines[0] and "640x360" in lines[0]
    assert not (tmp_path / "nope.yaml").exists()


@pytest.mark.skipif(shutil.which("xmessage") is None, reason="xmessage is needed (apt-get install -y x11-utils)")
def test_a_window_where_nothing_moves_says_so_and_what_to_try(tmp_path):
    done = _new("still", tmp_path, "--command", "xmessage -geometry 400x200 nothing moves here", "--keys", "w,space",
                timeout=90)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: nothing moved the view"), done.stderr
    assert "past its menus" in lines[0]
    assert not (tmp_path / "still.yaml").exists()


def test_attaching_to_a_running_game_on_a_display_measures_it_and_leaves_it_running(tmp_path):
    server = Xvfb.start("1024x768x24")  # "the user's display"
    display = server.display
    try:
        game = subprocess.Popen([sys.executable, str(WORLD_WINDOW)], env={**os.environ, "DISPLAY": display},
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            done = _new("attached", tmp_path, "--attach", str(game.pid), "--display", display, "--keys", "w,s",
                        timeout=120)
            assert game.poll() is None  # ours to end, not the scaffold's
        finally:
            game.terminate()
            game.wait(30)
    finally:
        server.stop()
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"attached to python (pid {game.pid}) on {display}" in done.stdout
    backend = load_backend(tmp_path / "attached.yaml")
    spec = backend.external
    assert spec is not None and spec.attach is not None and spec.attach.process_name == "python"
    assert spec.launch is not None and spec.launch.args == [str(WORLD_WINDOW)]  # from the process's command line
    assert spec.display.xvfb == "never"
    # What the scaffold measured, on failure: once in CI (four workers) w and s were judged no walk
    assert spec.input.keyboard is not None and spec.input.keyboard.left_stick is not None, done.stdout
    assert (spec.input.keyboard.left_stick.up, spec.input.keyboard.left_stick.down) == ("w", "s"), done.stdout
