"""The time a batch run has left, for its progress line.

Episodes run `workers` at a time. Dividing the run's elapsed time by the episodes finished, the simple pace,
is far off at width: when the first of 64 episodes ends, 63 more are nearly done, and the pace says the run has
just begun. Nor is the mean of the finished episodes enough: the first to end are the short ones. So a running
episode that has played a share of its step budget is expected to need the same time again for each such
share (a model-bound episode steps at the model's pace), one whose share is unknown (a Ray task) the mean time
less what it has run; a queued one takes the mean of all those times, and starts on the first worker free.
The run ends when the last worker does.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence


def time_left(mean_episode_s: float, running_ages_s: Sequence[float], queued: int, workers: int,
              running_progress: Sequence[float] = (), finished: int = 1) -> float:
    """Seconds until the last episode ends. `running_ages_s`: how long each running episode has run;
    `running_progress`: the share of its step budget each has played (0 or missing: unknown);
    `mean_episode_s`: the mean time of the `finished` episodes."""
    workers = max(1, workers, len(running_ages_s))
    progress = list(running_progress) + [0.0] * (len(running_ages_s) - len(running_progress))
    totals = [age / share for age, share in zip(running_ages_s, progress, strict=True) if share > 0]
    free_at = [age * (1 - share) / share if share > 0 else max(0.0, mean_episode_s - age)
               for age, share in zip(running_ages_s, progress, strict=True)]
    free_at += [0.0] * (workers - len(free_at))
    heapq.heapify(free_at)
    each = (mean_episode_s * finished + sum(totals)) / (finished + len(totals))
    for _ in range(queued):
        heapq.heapreplace(free_at, free_at[0] + each)
    return max(free_at, default=0.0)
