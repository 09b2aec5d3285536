"""`backend new` waits for the game's world to be drawn: a picture that moves at rest (OpenArena's idle weapon and
flickering lights change 0.3-0.5% of the pixels between frames) is judged against its own rest noise, not waited
out to the timeout (90 s of a 156 s run before)."""

from __future__ import annotations

import time

import numpy as np
import pytest

from core.scaffold import scaffold
from core.scaffold.motion import ANALYSIS_WIDTH
from core.scaffold.probes import STILL_LEVEL, Prober
from core.scaffold.scaffold import wait_drawn

HEIGHT = 180
LOADING_FRAMES = 10


class FlickeringGame:
    """Frames of a game that loads (every pixel changes) and then flickers in one corner (0.5% of the pixels)."""

    def __init__(self) -> None:
        self.frames = 0
        self.noise = np.random.default_rng(0)

    def grab(self) -> np.ndarray:
        self.frames += 1
        if self.frames <= LOADING_FRAMES:
            return self.noise.integers(0, 256, (HEIGHT, ANALYSIS_WIDTH, 3), dtype=np.uint8)
        picture = np.full((HEIGHT, ANALYSIS_WIDTH, 3), 90, np.uint8)
        picture[:18, :16] = 255 * (self.frames % 2)
        return picture


def prober_for(game: FlickeringGame) -> Prober:
    prober = Prober.__new__(Prober)  # no X display: the frames come from the game above
    prober.capture = game  # pyright: ignore[reportAttributeAccessIssue] - a stand-in with the one method used
    prober.still_level = STILL_LEVEL
    prober._next_grab = 0.0
    return prober


def test_a_picture_that_moves_at_rest_is_drawn_once_it_changes_no_more_than_its_rest_noise(monkeypatch):
    monkeypatch.setattr(scaffold, "READY_STRICT_S", 0.5)
    game, said = FlickeringGame(), []
    prober = prober_for(game)
    still = wait_drawn(prober, time.monotonic() + 6.0, said.append)
    assert still is not None, said  # at the prober's own level it never stands still: the 6 s would run out
    assert game.frames > LOADING_FRAMES
    assert len(said) == 1 and said[0].startswith("the picture moves at rest (0.5"), said
    assert prober.still_level == pytest.approx(1.5 * 288 / (HEIGHT * ANALYSIS_WIDTH))


def test_a_still_picture_is_drawn_at_the_probers_own_level(monkeypatch):
    class StillGame(FlickeringGame):
        def grab(self) -> np.ndarray:
            picture = super().grab()
            picture[:18, :16] = 90
            return picture

    game, said = StillGame(), []
    prober = prober_for(game)
    assert wait_drawn(prober, time.monotonic() + 6.0, said.append) is not None
    assert said == [] and prober.still_level == STILL_LEVEL
