"""Code-level isolation: what an agent is given cannot carry ground truth.

The import-linter contract (tests/test_project.py) forbids core.agents from importing the
evaluator, the memory readers or the world. These tests pin the Observation type itself.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from core.agents.observation import HistoryEntry, Observation
from core.evaluation.sample import StateSample

GROUND_TRUTH = {f.name for f in dataclasses.fields(StateSample)}


def test_an_observation_has_no_field_for_ground_truth():
    names = {f.name for f in dataclasses.fields(Observation)} | {f.name for f in dataclasses.fields(HistoryEntry)}
    assert names.isdisjoint(GROUND_TRUTH - {"time"}), names & GROUND_TRUTH
    # audio: the mixed signal of the last step, as a player hears it (never an event list)
    assert names == {"step", "instruction", "frame", "previous_frame", "left_view", "right_view", "history",
                     "audio", "audio_mode", "hearing", "action", "thought", "self_assessment", "feedback"}


def test_observations_are_frozen_and_take_only_images_as_pixels():
    frame = np.zeros((36, 64, 3), np.uint8)
    observation = Observation(step=0, instruction="Go to the bakery.", frame=frame)
    with pytest.raises(dataclasses.FrozenInstanceError):
        observation.instruction = "x"  # type: ignore[misc]
    with pytest.raises(TypeError, match="RGB uint8 image"):
        Observation(step=0, instruction="Go.", frame=np.zeros((36, 64), np.float32))
