"""The studio as a user starts it on a desktop: `python main.py` in a real X server (Xvfb) with Qt's xcb
platform plugin, not offscreen. The window maps, the world connects, a replay starts no world, and a
key held down with xdotool (so X auto-repeats it) walks for as long as it is held.

Screenshots are written to the test's folder, or to $POKEGYM_SCREENSHOT_DIR when set, to look at.
"""

from __future__ import annotations

import re
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from core.episode.synthetic import write_long_episode
from core.game.child import pid_alive
from core.recording.reader import EpisodeReader
from tests.studio.desktop_support import Studio, colour_count, focus, logged_time, screenshot_path
from tests.xserver import map_state, screenshot, screenshot_when, tool, xvfb

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="an X server is a Linux desktop here")


def test_the_studio_opens_in_a_real_x_server_connects_and_quits_cleanly(tmp_path):
    with xvfb() as display:
        studio = Studio(display, tmp_path)
        try:
            window = studio.window(display, "PokeGym Studio")
            assert map_state(display, window) == "IsViewable"
            world_pid = int(studio.wait_for_line(r"world ready: .*, pid (\d+)").group(1))
            assert pid_alive(world_pid)
            studio.wait_for_line(r"studio\.live: connected")  # the window has heard of it
            focus(display, window)
            # The town's water (the backdrop's blue) on the map: the window shows the connected world.
            screenshot_when(display, screenshot_path(tmp_path, "desktop_live.png"),
                            lambda image: int((image == (190, 215, 240)).all(axis=-1).sum()) > 2_000)
            assert studio.close(display, window) == 0
        finally:
            studio.end()
    assert not pid_alive(world_pid)
    assert "Aborted" not in "\n".join(studio.lines)


def test_replaying_a_file_on_the_desktop_starts_no_world(tmp_path):
    episode = write_long_episode(tmp_path / "episode.h5", 30, [np.full((72, 128, 3), 40 + i, np.uint8)
                                                               for i in range(30)])
    with xvfb() as display:
        studio = Studio(display, tmp_path, "replay", str(episode))
        try:
            window = studio.window(display, "PokeGym Studio|synthetic")
            studio.wait_for_line(r"studio\.replay: opened .*episode\.h5 \(30 steps\)")
            assert map_state(display, window) == "IsViewable"
            assert studio.children() == []  # no world, no evaluator
            # The recording's first frame (grey 40) in the frame view.
            screenshot_when(display, screenshot_path(tmp_path, "desktop_replay.png"),
                            lambda image: colour_count(image, 40, 40) > 50_000)
            assert studio.close(display, window) == 0
        finally:
            studio.end()
    assert not any("world ready" in line for line in studio.lines)


def test_on_a_small_screen_the_window_fits_it(tmp_path):
    """A laptop's 1280x720: the window opens no larger than the screen (it was 1500x900, its right-hand panels
    past the edge); its panels' minimum sizes fit."""
    episode = write_long_episode(tmp_path / "episode.h5", 5, [np.full((72, 128, 3), 40, np.uint8)] * 5)
    with xvfb("1280x720x24") as display:
        studio = Studio(display, tmp_path, "replay", str(episode))
        try:
            window = studio.window(display, "PokeGym Studio|synthetic")
            studio.wait_for_line(r"studio\.replay: opened")
            geometry = tool(display, "xdotool", "getwindowgeometry", window)
            width, height = (int(v) for v in re.search(r"Geometry: (\d+)x(\d+)", geometry).groups())
            assert width <= 1280 and height <= 720, geometry
            assert studio.close(display, window) == 0
        finally:
            studio.end()


def test_a_key_held_down_in_x_walks_for_as_long_as_it_is_held(tmp_path):
    hold_s = 2.0
    with xvfb() as display:
        studio = Studio(display, tmp_path)
        try:
            window = studio.window(display, "PokeGym Studio")
            studio.wait_for_line(r"world ready")
            focus(display, window)
            tool(display, "xdotool", "key", "ctrl+r")  # Start: the random agent plays
            studio.wait_for_line(r"episode started: .*recording (\S+)")
            tool(display, "xdotool", "key", "ctrl+k")  # Take control: the agent pauses
            focus(display, window)
            before_down = time.time()  # wall times, as the recording's step times and the log's are
            tool(display, "xdotool", "keydown", "w")
            after_down = time.time()
            time.sleep(hold_s)  # the user holding the key: X auto-repeats it meanwhile
            before_up = time.time()
            tool(display, "xdotool", "keyup", "w")
            # When the studio took the key-up, from its log: on a loaded machine that comes a while after the X
            # server sent it, and a step that began meanwhile began while the key was down for the studio.
            released = studio.wait_for_line(r"^(\S+ \S+) INFO studio\.human_control: key up: Key_W", seconds=30)
            logged_up = logged_time(released.group(1))
            screenshot(display, screenshot_path(tmp_path, "desktop_control.png"))
            tool(display, "xdotool", "key", "ctrl+period")  # Stop
            studio.wait_for_line(r"episode ended: stopped")
            assert studio.close(display, window) == 0
        finally:
            studio.end()
    recording = Path(studio.wait_for_line(r"episode started: .*recording (\S+)").group(1))
    with EpisodeReader(recording) as episode:
        human_steps = [i for i, r in enumerate(episode.records()) if r["source"] == "human"]
        human = [episode.record(i) for i in human_steps]
        ended_at = episode.step_numbers()["time"][human_steps]  # when each step's record was made, just after it
    walked = sum(seconds for r in human for _, seconds in r["macro"])
    assert all(r["macro"][0][0]["left_y"] == 1.0 for r in human)
    facts = (walked, len(human), round(before_up - after_down, 2), round(logged_up - before_down, 2),
             [round(t - before_down, 2) for t in ended_at])
    # X's auto-repeat (about 25 presses a second after 0.66 s) adds nothing: one 0.25 s step per 0.25 s held at
    # most, give or take the step in progress at each end.
    assert walked <= logged_up - before_down + 0.5, facts
    # It walked until the key went up, not one tap: a step every 0.25 s until the release, the last ending no
    # earlier than one step's cadence before it. How much game time that is depends on the machine's pace (a
    # lockstep world under four test workers takes ~0.4 s of wall for a 0.25 s step: it walked 1.25 s of a 2 s
    # hold), so the steps' own ends are checked, not the game time.
    assert len(human) >= 3 and ended_at[-1] >= before_up - 0.3, facts
    # ... and no longer: what was waiting at the release is withdrawn; only the step in progress plays out.
    assert sum(t > logged_up + 0.15 for t in ended_at) <= 1, facts
    shutil.rmtree(tmp_path / "recordings", ignore_errors=True)


def test_a_studio_killed_with_its_x_server_leaves_nothing_in_dev_shm(tmp_path):
    """The X server dies under the studio (a desktop session ends): Qt ends the studio at once, with no cleanup of
    its own, and the world and evaluator it started remove their folders (frame ring, sockets) themselves."""
    with xvfb() as display:
        studio = Studio(display, tmp_path)
        try:
            studio.window(display, "PokeGym Studio")
            studio.wait_for_line(r"studio\.live: connected", seconds=120)
            folders = [Path(found) for child in studio.children()
                       for found in re.findall(r"--runtime-dir (\S+)", child)]
            assert len(folders) == 2 and all(folder.is_dir() for folder in folders)  # the world's, the evaluator's
            children = [int(p) for p in re.findall(r"--pid (\d+)", " ".join(studio.children()))]
        except BaseException:
            studio.end()
            raise
    try:
        # Qt ends it with status 1 (the X connection broke): an exit, not a crash (its sound feeder's thread, still
        # delivering Qt events while PySide deleted them at exit, made it a segfault).
        assert studio.process.wait(60) == 1
    finally:
        studio.end()
    crashed = [line for line in studio.lines if "Traceback" in line or "Fatal Python error" in line]
    assert not crashed, studio.lines[-40:]
    deadline = time.monotonic() + 30
    while (any(folder.exists() for folder in folders) or any(pid_alive(pid) for pid in children)) \
            and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(folder.exists() for folder in folders), folders
    assert not any(pid_alive(pid) for pid in children)  # the world is gone too

