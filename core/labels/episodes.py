"""An episode's facts and labels together, loaded once for export, agreement and the studio's editor.

A file that is not a readable episode is an EpisodeFileError; a folder scan lists it as damaged, with
the reason, and goes on. An episode whose stored labels cannot be read (both copies damaged, a newer
label format) still loads: its labels are marked unreadable (`labels_error`), and nothing saves over them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.episode import EpisodeResult, read_header
from core.labels.model import AUTO_ANNOTATOR, AnnotatorLabels, LabelDocument, LabelEditor, automatic_labels
from core.labels.store import LabelStoreError, read_labels
from core.recording.errors import EpisodeFileError


@dataclass(frozen=True)
class EpisodeLabels:
    path: Path
    metadata: Mapping[str, Any]
    outcome: EpisodeResult | None  # how the episode ended; None: it was cut short
    step_count: int
    document: LabelDocument  # empty when the labels are unreadable
    labels_error: LabelStoreError | None = None  # why the stored labels cannot be read; never saved over

    @property
    def result(self) -> dict[str, Any] | None:
        """The result as the file stores it (JSON), for code that reads it by key."""
        return self.outcome.to_json() if self.outcome is not None else None

    def annotator(self, name: str) -> AnnotatorLabels | None:
        """A human's labels, or for AUTO_ANNOTATOR the automatic suggestions (None if cut short)."""
        if name == AUTO_ANNOTATOR:
            return automatic_labels(self.result) if self.outcome is not None else None
        return self.document.annotators.get(name)


@dataclass(frozen=True)
class FolderScan:
    episodes: list[EpisodeLabels] = field(default_factory=list[EpisodeLabels])
    # files that are not readable episodes
    damaged: list[EpisodeFileError] = field(default_factory=list[EpisodeFileError])

    @property
    def warnings(self) -> list[str]:
        """One line per damaged file and per episode whose labels are unreadable, each with its reason."""
        return ([f"skipped {error.path}: {error.part}: {error.problem}" for error in self.damaged]
                + [f"labels of {episode.path} left out: {episode.labels_error}"
                   for episode in self.episodes if episode.labels_error is not None])


def load_episode_labels(path: Path) -> EpisodeLabels:
    """An episode's header (core.episode.read_header: no step is read) with its labels. Raises
    EpisodeFileError for a file that is not a readable episode."""
    header = read_header(path)
    try:
        document, error = read_labels(path), None
    except LabelStoreError as exc:
        document, error = LabelDocument(), exc
    return EpisodeLabels(Path(path), header.metadata, header.result, header.step_count, document, error)


def scan_folder(folder: Path) -> FolderScan:
    """Every *.h5 file under `folder` (recursively, sorted): the episodes, and the files that are damaged."""
    scan = FolderScan()
    for path in sorted(Path(folder).rglob("*.h5")):
        try:
            scan.episodes.append(load_episode_labels(path))
        except EpisodeFileError as exc:
            scan.damaged.append(exc)
    return scan


def load_folder(folder: Path) -> tuple[list[EpisodeLabels], list[str]]:
    """The episodes under `folder`, and a warning (with its reason) for each file or labels left out."""
    scan = scan_folder(folder)
    return scan.episodes, scan.warnings


def open_editor(path: Path, annotator: str) -> LabelEditor:
    """An editing session for `annotator` on one episode: their saved labels, or the suggestions. Raises
    EpisodeFileError for a damaged file and LabelStoreError when its labels are unreadable."""
    episode = load_episode_labels(path)
    if episode.labels_error is not None:
        raise episode.labels_error
    return LabelEditor.for_episode(annotator, episode.result, episode.step_count, episode.document)
