"""Rescoring recorded episodes with the current metrics, from what their episode files hold.

Results rows keep the metrics computed when the episode ran. When the definitions change (see
METRICS_VERSION in metrics.py), `python main.py report DIR --rescore` recomputes them from the
per-step records with the same code the runner uses: the file is read by `load_episode` into the
same `Episode` the runner fills, and `Episode.metrics()` counts it. What an old file never recorded
cannot be recovered: files written before metrics v2 hold no separate displacement for automatic
push-backs, so their steps after a push still include it. Files before v3 hold no goal area (then taken
from the task file of the same id, where one exists) and no continuous move thresholds (then ε). Rows
written before trajectory digests get one from their file, so duplicate trajectories can be told.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core.episode import Episode, load_episode
from core.episode.metrics import GoalArea, episode_metrics
from core.episode.records import trajectory_digest
from core.evaluation.tasks import TaskFileError, load_task, suite_folder
from core.recording.errors import EpisodeFileError

SEPARATE_PUSH_DISPLACEMENT_SINCE = 2  # the metrics version whose files record a push-back's displacement apart


def _scored_version(episode: Episode, row_metrics: dict[str, Any]) -> int:
    """The metrics version the file was written under: its own result's, else the results row's."""
    metrics = episode.result.metrics if episode.result is not None else row_metrics
    return int((metrics or {}).get("metrics_version", 1))


def rescore_episode(path: Path, success: bool, reached_goal_area: bool,
                    row_metrics: dict[str, Any] | None = None) -> tuple[dict[str, Any], str | None, str]:
    """(metrics JSON, warning or None, trajectory digest) of one episode file. Raises EpisodeFileError, also when
    a step's record is damaged: scoring a step whose action is unknown would change the numbers silently."""
    episode = load_episode(path)
    damaged = episode.damaged_records
    if damaged:
        first = min(damaged)
        raise EpisodeFileError(path, f"{len(damaged)} step record(s)", f"are damaged ({damaged[first]})", first)
    warning = None
    if _scored_version(episode, row_metrics or {}) < SEPARATE_PUSH_DISPLACEMENT_SINCE:
        pushes = [s for s in episode if s.intervention is not None and s.intervention.kind == "push_back"
                  and s.intervention.source == "auto"]
        if pushes:
            warning = (f"{path} predates separate push-back displacement; {len(pushes)} automatic push(es) still "
                       "count toward the agent's following move")
    # As the runner scores: the StepRecords' facts, with success as the run reported it (the results row).
    goal = episode.goal_area or _goal_from_task_file(episode)
    judged = episode.result is None or episode.result.end_reason != "stopped"
    metrics = episode_metrics([step.facts for step in episode], success, reached_goal_area, goal, judged=judged)
    return metrics.to_json(), warning, trajectory_digest(list(episode))


def _goal_from_task_file(episode: Episode) -> GoalArea | None:
    """The goal area of a file written before metrics v3 recorded it: from its task's file, if it is still there."""
    task_id = episode.metadata.get("task_id")
    backend = str(episode.metadata.get("backend") or "builtin")
    if not isinstance(task_id, str):
        return None
    try:
        task = load_task(suite_folder(backend) / f"{task_id}.yaml")
    except TaskFileError:
        return None
    goal = task.goal_point()
    return GoalArea(goal[0], goal[1], goal[2]) if goal is not None else None


def rescore_rows(folder: Path, rows: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """The rows with metrics and failure suggestions recomputed from their episode files (in memory;
    results.jsonl is left as it was), and a warning for each episode that could not be rescored."""
    rescored: list[dict[str, Any]] = []
    warnings: list[str] = []
    for row in rows:
        episode = row.get("episode")
        if row.get("end_reason") == "error" or not episode:
            rescored.append(row)
            continue
        path = folder / episode
        try:
            metrics, warning, digest = rescore_episode(path, bool(row.get("success")),
                                                       bool(row.get("reached_goal_area")), row.get("metrics") or {})
        except (EpisodeFileError, OSError) as exc:
            warnings.append(f"{path} could not be rescored ({exc}); its recorded metrics are used")
            rescored.append(row)
            continue
        if warning:
            warnings.append(warning)
        # Rows written before trajectory digests get one, so the report can tell duplicate trajectories.
        rescored.append({**row, "metrics": metrics, "failure_category_suggestion": metrics["failure_category"],
                         "trajectory_digest": row.get("trajectory_digest") or digest})
    return rescored, warnings
