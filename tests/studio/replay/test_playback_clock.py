"""Replay's playback clock follows the recording's ticks (studio/replay/playback.py): a step shows for as long
as it took in game time, at the game's rate × speed, and frames recorded during a step at their own ticks."""

from __future__ import annotations

import numpy as np
import pytest

from core.episode import Episode
from core.episode.records import StepRecord
from studio.replay.playback import PlaybackPlan


def episode_of(lengths: list[int], frames_at: list[int] = (), tick_hz: float = 30.0) -> Episode:
    episode = Episode({"tick_hz": tick_hz})
    tick = 0
    for number, length in enumerate(lengths, 1):
        episode.append_step(StepRecord(number, "agent", tick, tick + length, 0.0, "MoveForward"))
        tick += length
    episode.append_frame_ticks(list(frames_at))
    return episode


def test_each_step_shows_for_its_own_game_time():
    plan = PlaybackPlan.for_episode(episode_of([15, 45, 30]), 0)  # 0.5 s, 1.5 s and 1 s at 30 ticks/s
    assert plan.starts.tolist() == pytest.approx([0.0, 0.5, 2.0])
    assert plan.seconds == pytest.approx(3.0)
    assert [plan.shot_at(t).step for t in (0.0, 0.49, 0.5, 1.99, 2.0, 2.99)] == [0, 0, 1, 1, 2, 2]
    assert plan.shot_at(3.0) is None  # played out


def test_a_plan_starts_at_the_cursor_and_uses_the_recorded_rate():
    plan = PlaybackPlan.for_episode(episode_of([10, 10, 10], tick_hz=10.0), 1)  # a game at 10 ticks/s
    assert plan.tick_hz == 10.0 and plan.shots[0].step == 1 and plan.seconds == pytest.approx(2.0)


def test_frames_recorded_during_a_step_show_at_their_ticks():
    plan = PlaybackPlan.for_episode(episode_of([30, 30], frames_at=[10, 20]), 0)
    kinds = [(shot.kind, shot.step, shot.tick) for shot in plan.shots]
    assert kinds == [("step", 0, 0), ("frame", 0, 10), ("frame", 0, 20), ("step", 1, 30)]
    assert np.diff(plan.starts).tolist() == pytest.approx([1 / 3, 1 / 3, 1 / 3])
    assert plan.shot_at(0.5).kind == "frame" and plan.shot_at(0.5).tick == 10
