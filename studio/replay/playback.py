"""Replay's playback clock, by the episode's own ticks: the clip plan (core/export/clip_plan.py) of the steps
from the cursor to the end, played at the game's rate × the chosen speed. A step shows for as long as it took in
game time; the continuous frames recorded while it ran show at the ticks they were taken. Qt-free: the view asks
which shot is due at a moment of playback and shows it (dropping those it could not draw in time)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.episode import Episode
from core.export.clip_plan import Shot, plan_clip, tick_rate


@dataclass(frozen=True)
class PlaybackPlan:
    shots: tuple[Shot, ...]
    starts: np.ndarray  # when each shot begins, in game seconds from the plan's start
    tick_hz: float

    @classmethod
    def for_episode(cls, episode: Episode, first: int) -> PlaybackPlan:
        """From the step at position `first` to the episode's last."""
        records = episode.steps(first)
        before = np.zeros(len(episode), np.int64)
        after = np.zeros(len(episode), np.int64)
        before[first:] = [r.tick_before for r in records]
        after[first:] = [r.tick_after for r in records]
        hz, _assumed = tick_rate(dict(episode.metadata))
        plan = plan_clip(before, after, episode.frame_ticks, first, len(episode) - 1, hz, step_seconds=None)
        seconds = np.array([shot.seconds for shot in plan.shots], float)
        return cls(plan.shots, np.concatenate([[0.0], np.cumsum(seconds)[:-1]]), hz)

    @property
    def seconds(self) -> float:
        """The plan's length in game seconds (at 1×)."""
        return float(self.starts[-1] + self.shots[-1].seconds) if self.shots else 0.0

    def shot_at(self, game_seconds: float) -> Shot | None:
        """The shot showing `game_seconds` into the plan; None once the plan has played out."""
        if not self.shots or game_seconds >= self.seconds:
            return None
        return self.shots[max(0, int(np.searchsorted(self.starts, game_seconds, side="right")) - 1)]
