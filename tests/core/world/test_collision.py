"""Collision maths on hand-made obstacles: stop, slide, gates that open with a flag, decks over water."""

from __future__ import annotations

import pytest

from core.world.collision import CollisionWorld, Obstacle

WALL = Obstacle("wall", cx=0.0, cy=5.0, half_x=10.0, half_y=0.5)


def never_on_deck(x: float, y: float) -> bool:
    return False


def test_walking_into_a_wall_stops_at_its_face():
    world = CollisionWorld([WALL])
    x, y = world.move(0.0, 0.0, 0.0, 10.0, 0.35, 0, never_on_deck)
    assert (x, y) == pytest.approx((0.0, 4.5 - 0.35))


def test_walking_at_an_angle_slides_along_the_wall():
    world = CollisionWorld([WALL])
    x, y = world.move(0.0, 4.0, 2.0, 2.0, 0.35, 0, never_on_deck)
    assert y == pytest.approx(4.15)
    assert x == pytest.approx(2.0, abs=1e-6)


def test_rotated_walls_and_round_posts_block_too():
    rotated = Obstacle("fence", cx=0.0, cy=0.0, half_x=5.0, half_y=0.1, angle_deg=45.0)
    post = Obstacle("lamp", cx=10.0, cy=0.0, radius=0.5)
    world = CollisionWorld([rotated, post])
    x, y = world.move(2.0, -2.0, -4.0, 4.0, 0.3, 0, never_on_deck)
    assert y - x < 0  # still on the south-east side of the diagonal fence
    x, y = world.move(8.0, 0.0, 4.0, 0.0, 0.3, 0, never_on_deck)
    assert x == pytest.approx(10.0 - 0.8)


def test_a_gate_vanishes_once_its_flag_is_set():
    gate = Obstacle("gate", cx=0.0, cy=5.0, half_x=2.0, half_y=0.2, open_flag=3)
    world = CollisionWorld([gate])
    closed = world.move(0.0, 0.0, 0.0, 10.0, 0.35, 0, never_on_deck)
    opened = world.move(0.0, 0.0, 0.0, 10.0, 0.35, 1 << 3, never_on_deck)
    assert closed[1] < 5.0 < opened[1]


def test_water_blocks_except_on_a_deck():
    water = Obstacle("stream", cx=0.0, cy=5.0, half_x=10.0, half_y=2.0, kind="water")
    world = CollisionWorld([water])

    def bridge(x: float, y: float) -> bool:
        return abs(x) < 1.0 and 1.0 < y < 9.0

    assert world.move(5.0, 0.0, 0.0, 10.0, 0.35, 0, bridge)[1] < 3.0
    assert world.move(0.0, 2.0, 0.0, 8.0, 0.35, 0, bridge)[1] == pytest.approx(10.0)
