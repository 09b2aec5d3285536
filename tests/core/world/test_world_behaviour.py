"""What a player of the built-in world notices, checked through the same surface an agent uses:
frames and pad input, with ground truth read from the world's memory."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest

from core.game.errors import InvalidPadError, RemoteGameError, UnknownStartStateError
from core.game.pad import Button, PadState

WALK = 1.0


def test_walking_moves_the_character_and_the_block_tracks_it(world, truth):
    world.reset("plaza_north")
    before = truth.read()
    world.hold(PadState(left_y=WALK), 1.0)
    after = truth.read()
    assert after["tick"] == before["tick"] + 30
    assert after["y"] == pytest.approx(before["y"] + 4.0, abs=0.05)  # walk speed 4 m/s, due north
    assert after["x"] == pytest.approx(before["x"], abs=1e-3)


def test_walking_into_a_fence_stops_the_character(world, truth):
    world.reset("park_gate")                       # (-4, -46), camera facing west, park fence at x = -9
    world.hold(PadState(left_x=-WALK), 2.0)        # stick left = south, relative to the camera
    world.hold(PadState(left_y=WALK), 4.0)         # west, straight into the fence
    stopped = truth.read()
    world.hold(PadState(left_y=WALK), 1.0)         # keep pushing
    still = truth.read()
    assert stopped["x"] == pytest.approx(-9 + 0.075 + 0.35, abs=0.02)
    assert math.hypot(still["x"] - stopped["x"], still["y"] - stopped["y"]) < 1e-3


def test_the_character_slides_along_a_wall_it_meets_at_an_angle(world, truth):
    world.reset("park_gate")
    world.hold(PadState(left_x=-WALK), 2.0)
    world.hold(PadState(left_y=WALK), 4.0)
    at_fence = truth.read()
    world.hold(PadState(left_x=-0.5, left_y=0.86), 1.0)  # 30 degrees off the fence's normal, to the south
    slid = truth.read()
    assert slid["x"] == pytest.approx(at_fence["x"], abs=0.02)
    assert slid["y"] < at_fence["y"] - 1.0


def test_an_invisible_wall_blocks_the_character(world, truth):
    world.reset("market_lane")                           # (6, -30), camera facing east
    world.hold(PadState(left_y=WALK), 11.0)              # along Market Lane to x = 50
    lane = truth.read()
    assert lane["x"] == pytest.approx(50.0, abs=0.1)
    world.hold(PadState(left_x=WALK), 8.0)               # south, toward the construction site's edge at y = -52
    blocked = truth.read()
    assert blocked["y"] == pytest.approx(-52 + 0.2 + 0.35, abs=0.02)


def test_rotating_the_camera_changes_the_view_but_not_the_position(world, truth):
    world.reset("plaza")
    before_frame = world.latest_frame().pixels
    before = truth.read()
    world.hold(PadState(right_x=WALK), 0.5)
    after_frame = world.latest_frame().pixels
    after = truth.read()
    assert (after["x"], after["y"]) == (before["x"], before["y"])
    assert after["camera_yaw"] == pytest.approx(before["camera_yaw"] - 60.0, abs=1e-3)  # 120 deg/s to the right
    changed = np.mean(np.any(after_frame != before_frame, axis=2))
    assert changed > 0.3, f"only {changed:.0%} of pixels changed after turning the camera 60 degrees"


def test_talking_to_an_npc_opens_a_dialogue_and_sets_its_flag(world, truth):
    world.reset("plaza_north")
    world.hold(PadState(left_x=0.93, left_y=0.36), 1.4)   # up to Orin by the bench
    prompt_frame = world.latest_frame().pixels
    world.press(Button.A)
    opened = truth.read()
    dialogue_frame = world.latest_frame().pixels
    assert opened["dialogue_active"] == 1
    assert "talked_old_man" not in truth.flags()
    world.press(Button.A)
    world.press(Button.A)
    assert truth.read()["dialogue_active"] == 0
    assert truth.flags() == ["talked_old_man"]
    # The dialogue box is drawn into the frame: a dark panel across the bottom.
    box = dialogue_frame[300:340, 40:600].astype(int)
    assert box.mean() < 70 and prompt_frame[300:340, 40:600].mean() > 90


def test_movement_is_disabled_while_a_dialogue_is_open(world, truth):
    world.reset("plaza_north")
    world.hold(PadState(left_x=0.93, left_y=0.36), 1.4)
    world.press(Button.A)
    during = truth.read()
    world.hold(PadState(left_y=WALK), 1.0)
    assert (truth.read()["x"], truth.read()["y"]) == (during["x"], during["y"])


def test_extra_views_do_not_advance_the_game(world, truth):
    world.reset("plaza")
    frame = world.latest_frame()
    left, right = world.extra_views([-90, 90])
    assert truth.read()["tick"] == 0
    assert world.latest_frame().frame_no == frame.frame_no
    assert not np.array_equal(left.pixels, right.pixels)
    assert not np.array_equal(left.pixels, frame.pixels)


def test_snapshot_and_restore_reproduce_the_state_and_the_frame(world, truth):
    world.reset("plaza_north")
    world.hold(PadState(left_x=0.4, left_y=0.9, right_x=0.3), 2.0)
    blob = world.snapshot()
    saved_block, saved_frame = truth.raw(), world.latest_frame().pixels
    world.hold(PadState(left_y=-WALK), 3.0)
    assert truth.raw() != saved_block
    world.restore(blob)
    assert truth.raw() == saved_block
    assert np.array_equal(world.latest_frame().pixels, saved_frame)


def test_bad_requests_are_rejected_clearly(world):
    with pytest.raises(UnknownStartStateError, match="unknown start state 'moon'; this world defines: plaza"):
        world.reset("moon")
    with pytest.raises(InvalidPadError, match="left_x"):
        world._request({"op": "hold", "pad": {"left_x": 1e9}, "ticks": 1})  # a client that skipped PadState
    with pytest.raises(InvalidPadError, match="finite number of seconds"):
        world.hold(PadState(), float("nan"))
    with pytest.raises(RemoteGameError, match="ticks must be an integer"):
        world._request({"op": "hold", "pad": {}, "ticks": -5})
    with pytest.raises(RemoteGameError, match="not a save state of the built-in world"):
        world.restore(b"garbage")
    damaged = bytearray(world.snapshot())
    damaged[-4:] = b"\x00\x00\x00\x00"
    with pytest.raises(RemoteGameError, match="the save state is damaged"):
        world.restore(bytes(damaged))
    world.reset("plaza")  # the world is still healthy after all that


def test_frames_are_rgb_at_the_configured_size(world):
    frame = world.latest_frame()
    assert frame.pixels.dtype == np.uint8 and frame.pixels.shape == (360, 640, 3)
    assert hashlib.sha256(frame.pixels.tobytes()).hexdigest() != hashlib.sha256(bytes(frame.pixels.size)).hexdigest()
