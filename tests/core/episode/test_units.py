"""Positions in the game's own units: what plots, scale bars and radii call them, and the round lengths drawn."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.episode.synthetic import write_long_episode
from core.episode.units import recorded_units, round_length, with_units
from core.export.clip_data import load_clip_episode
from core.export.inset import TrajectoryInset


@pytest.mark.parametrize(("metadata", "units"), [
    ({"position_units": "nodes"}, "nodes"),
    ({"position_units": None}, None),                       # the profile named none
    ({"map_outline": [{"kind": "solid", "points": [[0, 0]]}]}, "m"),  # an older built-in world file
    ({"game": "minetest"}, None),                           # an older file of another game: unsaid
])
def test_an_episode_says_what_its_positions_are_in(metadata, units):
    assert recorded_units(metadata) == units


@pytest.mark.parametrize(("shortest", "length"), [(0.3, 0.5), (3.0, 5.0), (7.0, 10.0), (10.0, 10.0), (101.0, 200.0),
                                                  (250.0, 500.0), (0.0, 1.0), (math.nan, 1.0)])
def test_lengths_drawn_are_round_and_never_shorter_than_asked(shortest, length):
    assert round_length(shortest) == pytest.approx(length)


def test_a_clips_scale_bar_names_the_recorded_units(tmp_path):
    frames = [np.full((36, 64, 3), 40, np.uint8)] * 10
    for units, word in (("units", " units"), ("m", " m"), (None, "")):
        path = write_long_episode(tmp_path / f"{units}.h5", 10, frames, seed=1, position_units=units)
        episode = load_clip_episode(path)
        inset = TrajectoryInset(episode, 0, 9, side=200, line=2)
        number = float(inset.scale_bar.removesuffix(word))
        assert inset.scale_bar == with_units(number, units) and number == round_length(number)
        assert number / inset.units_per_pixel >= 200 / 8  # long enough to read
