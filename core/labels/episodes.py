"""An episode's facts and labels together, loaded once for export, agreement and the studio's editor."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.labels.model import AUTO_ANNOTATOR, AnnotatorLabels, LabelDocument, LabelEditor, automatic_labels
from core.labels.store import LabelStoreError, read_labels
from core.recording.reader import EpisodeFileError, EpisodeReader


@dataclass(frozen=True)
class EpisodeLabels:
    path: Path
    metadata: Mapping[str, Any]
    result: Mapping[str, Any] | None  # None: the episode was cut short
    step_count: int
    document: LabelDocument

    def annotator(self, name: str) -> AnnotatorLabels | None:
        """A human's labels, or for AUTO_ANNOTATOR the automatic suggestions (None if cut short)."""
        if name == AUTO_ANNOTATOR:
            return automatic_labels(self.result) if self.result is not None else None
        return self.document.annotators.get(name)


def load_episode(path: Path) -> EpisodeLabels:
    """Raises LabelStoreError for a file that is not a readable episode."""
    try:
        with EpisodeReader(path) as episode:
            metadata, result, step_count = episode.metadata, episode.result, episode.step_count
    except (EpisodeFileError, OSError, KeyError, ValueError, RuntimeError) as exc:  # damaged files
        raise LabelStoreError(f"cannot read episode {path}: {exc}") from exc
    return EpisodeLabels(Path(path), metadata, result, step_count, read_labels(path))


def load_folder(folder: Path) -> tuple[list[EpisodeLabels], list[str]]:
    """Every *.h5 episode under `folder` (recursively, sorted), and a warning for each file skipped."""
    episodes, warnings = [], []
    for path in sorted(Path(folder).rglob("*.h5")):
        try:
            episodes.append(load_episode(path))
        except LabelStoreError as exc:
            warnings.append(f"skipped {path}: {exc}")
    return episodes, warnings


def open_editor(path: Path, annotator: str) -> LabelEditor:
    """An editing session for `annotator` on one episode: their saved labels, or the suggestions."""
    episode = load_episode(path)
    return LabelEditor.for_episode(annotator, episode.result, episode.step_count, episode.document)
