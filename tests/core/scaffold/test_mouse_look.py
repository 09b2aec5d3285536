"""Mouse look measured from frames, on a game drawn in-process: a first-person camera over a texture that repeats
every 8.6 degrees (block textures repeat), so a turn of more than half that is tracked to the wrong stripe. The
old reading (60 px right and back, 12 deg) said under a third of Minetest's 0.2 deg/px here; the rounds must not."""

from __future__ import annotations

from collections.abc import Callable

import cv2
import numpy as np
import pytest

from core.game.external.x11 import WindowInfo
from core.scaffold import mouse
from core.scaffold.motion import ANALYSIS_WIDTH, yaw
from core.scaffold.mouse import measure_mouse
from core.scaffold.probes import Probe

HEIGHT = 180
FOCAL = 160.0           # a 90 deg horizontal field of view across 320 px
PANORAMA_PX_PER_DEG = 2.8
STRIPE_PX = 24          # 8.6 deg: a tracker finds the wrong stripe for a turn of more than 4.3 deg


def _panorama() -> np.ndarray:
    rows = np.random.default_rng(0).random((HEIGHT + 120, 1)) > 0.5   # horizontal edges, for corners
    stripes = (np.arange(2000) // (STRIPE_PX // 2)) % 2 == 0
    picture = np.where(stripes[None, :], np.where(rows, 220, 140), 30).astype(np.uint8)
    return cv2.GaussianBlur(picture, (3, 3), 0)


class SnowGame:
    """The camera turns by `turn(dx)` degrees for a mouse motion of dx px, right for right, and tilts alike, down
    for down."""

    def __init__(self, turn: Callable[[int], float]) -> None:
        self.window = WindowInfo(1, "snow", 0, 0, ANALYSIS_WIDTH, HEIGHT, None)
        self.turn = turn
        self.yaw = 0.0
        self.pitch = 0.0
        self.panorama = _panorama()

    def picture(self) -> np.ndarray:
        columns = self.yaw + np.degrees(np.arctan((np.arange(ANALYSIS_WIDTH) - (ANALYSIS_WIDTH - 1) / 2) / FOCAL))
        map_x = np.tile((1000 + columns * PANORAMA_PX_PER_DEG).astype(np.float32), (HEIGHT, 1))
        map_y = np.tile((60 + np.arange(HEIGHT) + self.pitch * PANORAMA_PX_PER_DEG).astype(np.float32)[:, None],
                        (1, ANALYSIS_WIDTH))
        return cv2.remap(self.panorama, map_x, map_y, cv2.INTER_LINEAR)

    def move_mouse(self, dx: int, dy: int, settle_limit_s: float) -> Probe:
        before = self.picture()
        self.yaw += self.turn(dx)
        self.pitch += self.turn(dy)
        return Probe(f"mouse {dx:+d},{dy:+d} px", before, [], self.picture(), 0.05)


class CountedTurns:
    """A turn per mouse motion that depends on how many motions came before (a game ignoring the mouse a while)."""

    def __init__(self, turn: Callable[[int, int], float]) -> None:
        self.turn = turn
        self.count = 0

    def __call__(self, dx: int) -> float:
        if dx == 0:
            return 0.0
        self.count += 1
        return self.turn(self.count, dx)


@pytest.mark.parametrize("degrees_per_px", [0.2, 0.4, 0.8])  # 0.4, 0.8: the first nudge is misread too
def test_a_big_turn_misread_on_a_repeating_texture_does_not_make_the_reading(degrees_per_px, monkeypatch):
    monkeypatch.setattr(mouse, "REWARM_REST_S", 0.0)
    game = SnowGame(lambda dx: degrees_per_px * dx)
    seen = game.picture()
    game.move_mouse(60, 0, 1.0)
    alone = yaw(seen, game.picture(), FOCAL)   # one 60 px move, read alone: the wrong stripe
    assert alone is not None and abs(alone.degrees - 60 * degrees_per_px) > 3.0
    game.yaw = 0.0
    said: list[str] = []
    look = measure_mouse(game, FOCAL, said.append)
    assert look.degrees_per_px == pytest.approx(degrees_per_px, rel=0.05), said
    assert look.invert_y is False
    assert "in proportion to the motion" in look.evidence


def test_a_turn_that_does_not_grow_in_proportion_to_the_motion_writes_no_mouse_settings(monkeypatch):
    monkeypatch.setattr(mouse, "REWARM_REST_S", 0.0)
    game = SnowGame(lambda dx: 0.05 * dx * (1 + abs(dx) / 4))   # mouse acceleration
    look = measure_mouse(game, FOCAL, lambda line: None)
    assert look.degrees_per_px is None
    assert "in proportion to the motion" in look.evidence and "not written" in look.evidence


def test_a_spell_in_which_the_game_ignores_the_mouse_does_not_leave_the_moves_too_small_to_read(monkeypatch):
    """A loaded machine: after a first clean round the game ignored the mouse for a while (a frame late, a world
    still loading). Each round in that spell read "too little turn"; halving the moves for it left them at 1 px
    (0.2 deg, under what is read) for good, and `backend new` wrote no mouse look in a CI run. A move too small to
    read is grown back, up to the first step."""
    monkeypatch.setattr(mouse, "REWARM_REST_S", 0.0)
    # the warm-up's nudge and its return, one clean round of 6 moves, then a spell
    moves = CountedTurns(lambda move, dx: 0.0 if 8 < move <= 24 else 0.2 * dx)
    said: list[str] = []
    look = measure_mouse(SnowGame(moves), FOCAL, said.append)
    assert moves.count > 24  # the spell happened while measuring
    assert look.degrees_per_px == pytest.approx(0.2, rel=0.05), said


def test_after_a_first_round_not_read_alike_a_move_too_small_to_read_is_grown_back(monkeypatch):
    """A loaded machine (a clean-clone CI run): the first round's moves turned the view but did not come back alike
    (a frame late), so the step was halved; the next round fell in a spell where the game ignored the mouse and
    read too little, and halving again left 1 px moves (0.2 deg, under what is read) for every round after. A move
    too small to read is grown back toward the step that did turn the view."""
    monkeypatch.setattr(mouse, "REWARM_REST_S", 0.0)

    def turn(move: int, dx: int) -> float:
        if 2 < move <= 4 and dx < 0:   # the first round's first return: only half way back
            return 0.1 * dx
        return 0.0 if 4 < move <= 10 else 0.2 * dx  # then a spell in which the game ignores the mouse

    moves = CountedTurns(turn)
    said: list[str] = []
    look = measure_mouse(SnowGame(moves), FOCAL, said.append)
    assert moves.count > 10
    assert look.degrees_per_px == pytest.approx(0.2, rel=0.05), said
