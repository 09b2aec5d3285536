"""The cursor the shared pane set follows: Live's follows the newest step until one is picked; Replay's
moves only when told (studio/episode_cursor.py)."""

from __future__ import annotations

from studio.episode_cursor import EpisodeCursor


def test_a_following_cursor_stays_on_the_newest_step_until_the_user_picks_one():
    cursor = EpisodeCursor(follows_newest=True)
    moves, following = [], []
    cursor.sig_moved.connect(moves.append)
    cursor.sig_following.connect(following.append)
    cursor.reset(0)
    for length in (1, 2, 3):
        cursor.grown(length)
    assert cursor.index == 2 and moves[-3:] == [0, 1, 2]
    cursor.move_to(0)
    cursor.grown(4)
    assert cursor.index == 0 and not cursor.following and following == [False]
    cursor.follow()
    assert cursor.index == 3 and cursor.following and following == [False, True]


def test_a_replay_cursor_moves_only_when_told_and_stays_inside_the_episode():
    cursor = EpisodeCursor()
    cursor.reset(10)
    assert cursor.index == 0
    cursor.grown(11)
    assert cursor.index == 0
    cursor.move_to(99)
    assert cursor.index == 10
    cursor.move_to(-5)
    assert cursor.index == 0
