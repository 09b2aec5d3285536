"""What the Live view draws for a task before and during an episode: the start from the task's own
start state (never from where the character stood before the reset), the goal, and the reference
route drawn from that start."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from core.authoring.context import world_start_states
from core.evaluation.tasks import Task
from widgets.trajectory_plot import TrajectoryPlot


@lru_cache(maxsize=1)
def _named_starts() -> dict[str, dict[str, Any]]:
    return world_start_states()[1]


def task_start(task: Task) -> tuple[float, float] | None:
    """Where the task's start state puts the character (named in the world file, or written inline)."""
    return task.start_position(_named_starts())


def show_task(plot: TrajectoryPlot, task: Task, frame_on_task: bool = False) -> None:
    """The task's start, goal radius and reference route (from the start) on the map; with
    `frame_on_task` (a game with no map outline to frame on) the view is framed on them."""
    start = task_start(task)
    if start is not None:
        plot.set_start(*start)
    found = task.goal_point()
    goal = found[:2] if found is not None else None
    radius = getattr(getattr(task.success, "reach", None), "radius", 3.0)
    if goal is not None:
        plot.set_goal(goal[0], goal[1], radius)
    route = ([start] if start is not None else []) + task.route_points()
    plot.set_route(route)
    if frame_on_task and (route or goal is not None):
        # A margin that grows with the goal's radius: a radius is in the game's units, as everything here is.
        plot.frame_on(np.array(route + ([goal] if goal is not None else []), float), margin=4 * radius)
