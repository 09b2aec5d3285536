"""A game that does not become ready says why, as it waits and when it gives up (issue 24, item 3): the window
looked for and the windows there are instead, the condition still unmet, and an early stop when the game exits or
its output says it failed. The fake window game under the module's Xvfb; `world` through the real CLI."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest

from core.game.errors import GameStartError
from core.game.external.game import ExternalGame
from core.paths import PROJECT_ROOT
from tests.external_support import needs_x11_tools, on_display, xvfb
from tests.fake_games.backends import fake_backend

pytestmark = needs_x11_tools
__all__ = ["on_display", "xvfb"]  # fixtures


def _launch(backend) -> ExternalGame:
    return ExternalGame.launch(backend.external, backend.name, backend.directory)


def test_no_matching_window_lists_the_windows_there_are_while_waiting_and_at_the_end(tmp_path, on_display):
    fake_backend(tmp_path, title="^Minetest 5", ready="{window: true, timeout_s: 6, settle_s: 0.0}")
    started = time.monotonic()
    done = subprocess.run([sys.executable, "main.py", "world", "--backend", str(tmp_path / "fake.yaml")],
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "DISPLAY": on_display})
    assert done.returncode == 2 and time.monotonic() - started < 30
    wanted = f"window titled like '^Minetest 5' (frames.window_title, a regex) on {on_display}"
    shown = r"windows shown there now: 'Fake Game \d+' \(pid \d+, 320x180\)"
    # every few seconds while it waits ...
    assert re.search(rf"fake: still waiting for {re.escape(wanted)}; {shown} \(\d s of 6 s\)", done.stderr), done.stderr
    # ... and in the one error line it ends with
    assert re.search(rf"error: the fake game was not ready within 6 s \(launch.ready.timeout_s\): still waiting for "
                     rf"{re.escape(wanted)}; {shown}", done.stderr), done.stderr
    assert "Traceback" not in done.stderr


def test_a_game_that_exits_while_starting_ends_the_wait_at_once_saying_what_it_waited_for(tmp_path, on_display):
    backend = fake_backend(tmp_path, extra_args=", --window-after, '60', --exit-after, '0.3'")
    started = time.monotonic()
    with pytest.raises(GameStartError) as raised:
        _launch(backend)
    assert time.monotonic() - started < 10  # not the 30 s time limit
    message = str(raised.value)
    assert message.startswith("the fake game exited with exit code 3 during start-up, while waiting for window "
                              "titled like '^Fake Game'"), message
    assert "windows shown there now: none" in message


def test_a_failure_in_the_games_output_ends_the_wait_with_that_line(tmp_path, on_display):
    backend = fake_backend(tmp_path, extra_args=", --window-after, '60', --say, 'ERROR: cannot load map castle'",
                           ready="{window: true, timeout_s: 30, settle_s: 0.0, fail_text: ['ERROR:']}")
    started = time.monotonic()
    with pytest.raises(GameStartError) as raised:
        _launch(backend)
    assert time.monotonic() - started < 10
    message = str(raised.value)
    assert message.startswith("the fake game reported a failure during start-up (ready.fail_text matched): "
                              "'ERROR: cannot load map castle'; stopped waiting for window titled like"), message


def test_waiting_for_the_log_text_says_so_and_names_the_file(tmp_path, on_display):
    backend = fake_backend(tmp_path, ready="{window: true, timeout_s: 1, settle_s: 0.0, "
                                           "log_file: '{runtime}/game.log', log_text: joined}")
    with pytest.raises(GameStartError) as raised:
        _launch(backend)
    assert re.match(r"the fake game was not ready within 1 s \(launch.ready.timeout_s\): still waiting for the text "
                    r"'joined' in \S+/game.log \(launch.ready.log_text\)", str(raised.value)), str(raised.value)


def test_a_ready_game_says_where_its_runtime_folder_is_and_ctrl_c_removes_it(tmp_path, on_display):
    """A user reading the game's own log (a position a console command printed, say) needs its runtime folder, made
    fresh for each launch: `world` names it once the game is ready (a user once dug it out of /proc/PID/environ)."""
    fake_backend(tmp_path)
    world = subprocess.Popen([sys.executable, "main.py", "world", "--backend", str(tmp_path / "fake.yaml")],
                             cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                             env={**os.environ, "DISPLAY": on_display})
    runtime = ""
    with world:
        try:
            said = [world.stdout.readline() for _ in range(2)]
            assert said[0].startswith("READY fake pid "), said
            folder = re.fullmatch(r"runtime folder (\S+) \(the backend's \{runtime\}.*\)\n", said[1])
            assert folder is not None, said
            runtime = folder.group(1)
            assert os.path.isfile(os.path.join(runtime, "events.log"))  # the game's own log, where the backend put it
        finally:
            world.terminate()
            world.wait(timeout=60)
    assert world.returncode == 0 and not os.path.exists(runtime)
