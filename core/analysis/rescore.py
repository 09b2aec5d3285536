"""Rescoring recorded episodes with the current metrics, from what their episode files hold.

Results rows keep the metrics computed when the episode ran. When the definitions change (see
METRICS_VERSION in metrics.py), `python main.py report DIR --rescore` recomputes them from the
per-step records with the same code the runner uses, so old runs can be compared with new ones.
What an old file never recorded cannot be recovered: files written before metrics v2 hold no
separate displacement for automatic push-backs, so their steps after a push still include it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core.episode.metrics import episode_metrics, facts_from_record
from core.recording.reader import EpisodeFileError, EpisodeReader


def rescore_episode(path: Path, success: bool, reached_goal_area: bool) -> tuple[dict[str, Any], str | None]:
    """(metrics JSON, warning or None) of one episode file. Raises EpisodeFileError."""
    with EpisodeReader(path) as episode:
        records = episode.records()
        numbers = episode.step_numbers()
    facts = [facts_from_record(record, {name: column[index].item() for name, column in numbers.items()})
             for index, record in enumerate(records)]
    pushes = [r for r in records if (r.get("intervention") or {}).get("kind") == "push_back"
              and (r.get("intervention") or {}).get("source") == "auto" and "intervention_displacement" not in r]
    warning = None
    if pushes:
        warning = (f"{path} predates separate push-back displacement; {len(pushes)} automatic push(es) still count "
                   "toward the agent's following move")
    return episode_metrics(facts, success, reached_goal_area).to_json(), warning


def rescore_rows(folder: Path, rows: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """The rows with metrics and failure suggestions recomputed from their episode files (in memory;
    results.jsonl is left as it was), and a warning for each episode that could not be rescored."""
    rescored, warnings = [], []
    for row in rows:
        episode = row.get("episode")
        if row.get("end_reason") == "error" or not episode:
            rescored.append(row)
            continue
        path = folder / episode
        try:
            metrics, warning = rescore_episode(path, bool(row.get("success")), bool(row.get("reached_goal_area")))
        except (EpisodeFileError, OSError) as exc:
            warnings.append(f"{path} could not be rescored ({exc}); its recorded metrics are used")
            rescored.append(row)
            continue
        if warning:
            warnings.append(warning)
        rescored.append({**row, "metrics": metrics, "failure_category_suggestion": metrics["failure_category"]})
    return rescored, warnings
