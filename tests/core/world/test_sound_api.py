"""The world's sound through the harness's API: exactly a step's ticks, clear refusals, and a silent world."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from core.game.audio_ring import AudioUnavailableError
from core.game.builtin import BuiltinWorld
from core.game.connection import Capability
from core.game.errors import UnsupportedCapabilityError
from core.game.pad import PadState
from core.world.sound.kernel import COMPILED

WALK = PadState(left_y=1.0)


def test_a_step_gives_exactly_its_ticks_of_sound(world):
    info = world.audio_info
    assert info is not None and (info.rate, info.channels) == (24000, 2)
    assert info.samples_per_tick * world.info.tick_hz == info.rate
    assert Capability.AUDIO in world.info.capabilities
    assert world.sound_mixer == ("compiled" if COMPILED is not None else "numpy")  # what bench world reports
    start = world.reset("plaza")
    first = world.hold_ticks(WALK, 15)
    second = world.hold_ticks(WALK, 15)
    one = world.audio_ticks(start.tick + 1, first.tick).samples
    two = world.audio_ticks(first.tick + 1, second.tick).samples
    both = world.audio_ticks(start.tick + 1, second.tick)
    assert both.rate == info.rate and both.samples.dtype == np.int16
    assert one.shape == (15 * info.samples_per_tick, 2)
    assert np.array_equal(both.samples, np.concatenate([one, two]))
    assert np.abs(both.samples).max() > 300  # the plaza is not silent


def test_sound_not_played_yet_or_gone_is_refused_with_the_reason(world):
    step = world.reset("plaza")
    step = world.hold_ticks(PadState(), 30)
    with pytest.raises(AudioUnavailableError, match="have not been played yet"):
        world.audio_ticks(step.tick + 1, step.tick + 15)
    assert len(world.audio_ticks(1, 30).samples) == 30 * 800
    world.reset("plaza")  # the ticks count from 0 again: the old ones are not this game's any more
    with pytest.raises(AudioUnavailableError, match="no tick has been played since the last reset"):
        world.audio_ticks(1, 30)
    ring_s = 30
    world.hold(PadState(), ring_s + 2)
    with pytest.raises(AudioUnavailableError, match="are gone from the audio ring.*read a step's sound right after"):
        world.audio_ticks(1, 15)


def test_a_restore_hears_the_same_as_the_first_time(world):
    world.reset("plaza")
    saved = world.snapshot()
    world.restore(saved)
    first = world.hold_ticks(WALK, 20)
    heard = world.audio_ticks(first.tick - 19, first.tick).samples
    world.hold_ticks(PadState(left_x=1.0), 10)
    again = world.restore(saved)
    world.hold_ticks(WALK, 20)
    assert np.array_equal(world.audio_ticks(again.tick + 1, again.tick + 20).samples, heard)


def test_a_world_launched_silent_has_no_sound_and_plays_the_same_game(world):
    with BuiltinWorld.launch(renderer="software", audio="off") as silent:
        assert silent.audio_info is None and silent.info.audio is None
        assert silent.sound_mixer is None
        assert Capability.AUDIO not in silent.info.capabilities
        assert not (Path(silent._ring.path).parent / "audio.bin").exists()
        with pytest.raises(UnsupportedCapabilityError, match="sound off"):
            silent.audio_ticks(1, 1)
        frames = []
        for game in (silent, world):
            game.reset("plaza")
            game.hold(PadState(left_x=0.5, left_y=1.0), 1.0)
            frames.append(hashlib.sha256(game.latest_frame().pixels.tobytes()).hexdigest())
        assert frames[0] == frames[1]


def test_steps_timed_without_sound_play_the_same_game_and_the_sound_goes_on_after_them(world):
    """`bench world` times the same steps with and without sound in one world process: the game must not
    notice, and the sound resumes from where the silent steps left the character."""
    ends = []
    for sound in (True, False):
        world.reset("plaza")
        timing = world.time_steps_in_detail([WALK.to_dict()] * 2, 15, sound)
        assert (timing.synth_seconds > 0) == sound and timing.cpu_seconds > 0
        ends.append(hashlib.sha256(world.latest_frame().pixels.tobytes()).hexdigest())
    assert ends[0] == ends[1]
    silent_end = world.latest_frame().tick
    with pytest.raises(AudioUnavailableError, match="no tick has been played since"):
        world.audio_ticks(silent_end - 29, silent_end)  # the silent ticks made no sound
    after = world.hold_ticks(WALK, 15)
    heard = world.audio_ticks(silent_end + 1, after.tick).samples
    assert len(heard) == 15 * world.audio_info.samples_per_tick and np.abs(heard).max() > 300
