"""The studio driving Minetest as a user drives it on a desktop: `python main.py --backend minetest` in a real X
server (Qt's xcb plugin), Minetest in an Xvfb of its own, and a key held down with xdotool after Take control.

A held key drives for as long as it is held, on a game whose step takes longer than the key's 0.25 s of
hold (real time: hold, settle, capture): a human step is queued only when none waits, and key-up drops
what is queued, so after the key is let go at most the step in progress plays out.
"""

from __future__ import annotations

import math
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from core.recording.reader import EpisodeReader
from tests.minetest_support import minetest_missing, require_minetest_in_ci
from tests.studio.desktop_support import Studio, focus, logged_time, screenshot_path
from tests.xserver import screenshot, tool, xvfb

require_minetest_in_ci()
pytestmark = [pytest.mark.skipif(sys.platform != "linux", reason="an X server is a Linux desktop here"),
              pytest.mark.skipif(minetest_missing(), reason="minetest and Xvfb are not installed (.ci/run does it)")]

HOLD_S = 2.0
WATCH_S = 3.0  # the user watches after letting go: before the fix, queued steps walked on for about 5 s
ONE_STEP_NODES = 2.0  # one 0.25 s step walks about 1 node (4 nodes/s); the rest is slack for the settle


def position_at(samples: dict[str, np.ndarray], when: float) -> tuple[float, float]:
    index = int(np.searchsorted(samples["time"], when))
    index = min(max(index, 0), len(samples["time"]) - 1)
    return float(samples["x"][index]), float(samples["y"][index])


def test_a_key_held_on_minetest_walks_while_held_and_at_most_one_step_after(tmp_path):
    with xvfb() as display:
        studio = Studio(display, tmp_path, "--backend", "minetest")
        try:
            window = studio.window(display, "PokeGym Studio")
            studio.wait_for_line(r"world ready: minetest", seconds=120)
            studio.wait_for_line(r"studio\.live: connected")
            focus(display, window)
            tool(display, "xdotool", "key", "ctrl+k")  # Take control before Start: the human has it from step 1
            tool(display, "xdotool", "key", "ctrl+r")
            recording = Path(studio.wait_for_line(r"episode started: .*recording (\S+)").group(1))
            studio.wait_for_line(r"episode reset done", seconds=120)  # Minetest restarted into the task's start
            focus(display, window)
            before_down = time.time()
            tool(display, "xdotool", "keydown", "w")
            after_down = time.time()
            time.sleep(HOLD_S)  # the user holding the key: X auto-repeats it meanwhile
            before_up = time.time()
            tool(display, "xdotool", "keyup", "w")
            # When the studio took the key-up, from its log: on a loaded machine that comes a step's time after
            # the X server sent it, and a step that began meanwhile began while the key was down for the studio.
            released = studio.wait_for_line(r"^(\S+ \S+) INFO studio\.human_control: key up: Key_W", seconds=30)
            after_up = logged_time(released.group(1))
            time.sleep(WATCH_S)  # the user watching: the character must stand still by now
            screenshot(display, screenshot_path(tmp_path, "desktop_minetest_control.png"))
            tool(display, "xdotool", "key", "ctrl+period")  # Stop
            studio.wait_for_line(r"episode ended: stopped", seconds=60)
            assert studio.close(display, window) == 0
        finally:
            studio.end()
    with EpisodeReader(recording) as episode:
        human_steps = [i for i, r in enumerate(episode.records()) if r["source"] == "human"]
        human = [episode.record(i) for i in human_steps]
        ended_at = episode.step_numbers()["time"][human_steps]  # when each step's record was made, just after it
        samples = episode.samples()
    assert human and all(r["macro"][0][0]["left_y"] == 1.0 for r in human)
    walked_while_held = math.dist(position_at(samples, after_down), position_at(samples, before_up))
    walked_after = math.dist(position_at(samples, after_up), position_at(samples, after_up + WATCH_S))
    gaps = np.diff(ended_at)
    cadence = float(np.median(gaps)) if len(gaps) else HOLD_S
    facts = (round(walked_while_held, 2), round(walked_after, 2), len(human), round(cadence, 2),
             round(after_up - before_down, 2), [round(t - before_down, 2) for t in ended_at])
    # It walked until the key went up, not one tap: steps one after another until the release, the last ending no
    # earlier than one step's cadence before it. A step's wall time is the machine's (hold, settle, capture: about
    # 0.5 s idle, 1 s under four test workers), so the steps' own ends are checked, and the walk by the steps made.
    assert len(human) >= 2 and ended_at[-1] >= before_up - cadence - 0.25, facts
    assert float(np.max(gaps)) <= 3 * cadence + 0.25, facts  # and steadily: no stall while it was held
    assert walked_while_held >= 0.5 * len(human), facts  # each 0.25 s step walks about 1 node (0.7 from standing)
    # ... and no longer: what was waiting at the release is withdrawn; only the step in progress plays out.
    assert walked_after <= ONE_STEP_NODES, facts
    assert sum(t > after_up + 0.05 for t in ended_at) <= 1, facts
    shutil.rmtree(tmp_path / "recordings", ignore_errors=True)
