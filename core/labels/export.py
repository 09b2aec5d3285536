"""Export every episode's labels under a folder to CSV or JSON Lines (schema: docs/labels-format.md).

One "episode" row per (episode, annotator) carries the failure category; one "span" row per span
(pending and rejected suggestions included, told apart by `span_status`). Episodes nobody labelled
give no rows. Files that cannot be read are skipped with a warning, never a crash.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TextIO

from core.labels.episodes import EpisodeLabels, load_folder
from core.labels.model import AnnotatorLabels, DeadlockLabel

ExportFormat = Literal["csv", "jsonl"]
COLUMNS: tuple[str, ...] = (
    "episode_file", "task_id", "agent", "granularity", "annotator", "labelled_at", "row_type", "failure_category",
    "category_confirmed", "suggested_category", "span_index", "span_start", "span_end", "span_kind", "awareness_step",
    "span_note", "span_origin", "span_status")


@dataclass(frozen=True)
class ExportResult:
    rows: int
    episodes: int  # episodes read (labelled or not)
    warnings: list[str]  # one per skipped file


def episode_rows(episode: EpisodeLabels, folder: Path) -> list[dict[str, Any]]:
    try:
        name = episode.path.relative_to(folder).as_posix()
    except ValueError:
        name = episode.path.as_posix()
    meta = episode.metadata
    base = {"episode_file": name, "task_id": meta.get("task_id"), "agent": meta.get("agent"),
            "granularity": meta.get("granularity"),
            "suggested_category": (episode.outcome.failure_category_suggestion or None) if episode.outcome else None}
    rows: list[dict[str, Any]] = []
    for annotator, labels in sorted(episode.document.annotators.items()):
        rows.append(_row(base, annotator, labels.updated, row_type="episode",
                         failure_category=labels.failure_category, category_confirmed=labels.category_confirmed))
        for index, span in enumerate(labels.spans):
            rows.append(_span_row(base, labels, index, span))
        for span in labels.rejected:
            rows.append(_span_row(base, labels, None, span))
    return rows


def label_rows(folder: Path) -> tuple[list[dict[str, Any]], int, list[str]]:
    episodes, warnings = load_folder(folder)
    rows = [row for episode in episodes for row in episode_rows(episode, Path(folder))]
    return rows, len(episodes), warnings


def write_rows(rows: Iterable[dict[str, Any]], stream: TextIO, fmt: ExportFormat) -> int:
    count = 0
    if fmt == "csv":
        writer = csv.DictWriter(stream, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({key: "" if value is None else value for key, value in row.items()})
            count += 1
    elif fmt == "jsonl":
        for row in rows:
            stream.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
    else:
        raise ValueError(f"unknown export format {fmt!r}; use csv or jsonl")
    return count


def export_labels(folder: Path, stream: TextIO, fmt: ExportFormat) -> ExportResult:
    rows, episodes, warnings = label_rows(folder)
    return ExportResult(write_rows(rows, stream, fmt), episodes, warnings)


def _row(base: dict[str, Any], annotator: str, labelled_at: str | None, **fields: Any) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(COLUMNS)
    row.update(base, annotator=annotator, labelled_at=labelled_at or None, **fields)
    return row


def _span_row(base: dict[str, Any], labels: AnnotatorLabels, index: int | None, span: DeadlockLabel) -> dict[str, Any]:
    return _row(base, labels.annotator, span.updated or labels.updated, row_type="span", span_index=index,
                span_start=span.start, span_end=span.end, span_kind=span.kind, awareness_step=span.awareness_step,
                span_note=span.note, span_origin=span.origin, span_status=span.status)
