"""What a clip's overlays need from an episode file, read once through load_episode (records, not
images: the clip reads each picture when it draws it): per-step records and ticks, the evaluator's
path, the map outline, human labels and the automatic deadlock spans."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core.episode import Episode, EpisodeResult, StepRecord, load_episode
from core.export import ExportError
from core.labels.model import AUTO_ANNOTATOR, deadlock_steps
from core.labels.store import LabelStoreError, read_labels
from core.recording.errors import EpisodeFileError

# RGB, as the studio draws them (widgets/timeline.py, widgets/reasoning_panel.py)
SPAN_RGB = {"unaware": (200, 30, 30), "aware": (235, 135, 0), "unclassified": (110, 110, 200),
            "suggested": (215, 120, 120)}
INTERVENTION_RGB = (200, 0, 150)
HUMAN_RGB = (0, 150, 170)  # teal: apart from the Aware span's orange and the success green


@dataclass(frozen=True)
class SpanOverlay:
    """A deadlock span to show while the clip is inside it (step numbers, inclusive)."""

    start: int
    end: int
    text: str
    kind: str  # a SPAN_RGB key


@dataclass
class ClipEpisode:
    path: Path
    metadata: dict[str, Any]
    result: EpisodeResult | None  # None: cut short
    steps: np.ndarray           # step numbers
    tick_before: np.ndarray
    tick_after: np.ndarray
    records: list[StepRecord]
    frame_ticks: np.ndarray
    sample_ticks: np.ndarray
    sample_xy: np.ndarray       # (m, 2)
    sample_facing: np.ndarray   # degrees
    spans: list[SpanOverlay]
    label_warning: str | None = None

    @property
    def step_count(self) -> int:
        return len(self.steps)

    def outline(self) -> list[tuple[str, np.ndarray]]:
        try:
            shapes: list[Any] = self.metadata.get("map_outline") or []
            return [(str(s["kind"]), np.asarray(s["points"], dtype=float).reshape(-1, 2)) for s in shapes]
        except (KeyError, TypeError, ValueError):
            return []  # a damaged outline only costs the inset's backdrop

    def sample_at(self, tick: int) -> int | None:
        """Index of the last evaluator sample taken at or before `tick` (None without samples)."""
        if len(self.sample_ticks) == 0:
            return None
        return int(np.clip(np.searchsorted(self.sample_ticks, tick, side="right") - 1, 0, len(self.sample_ticks) - 1))

    def spans_at(self, step: int) -> list[SpanOverlay]:
        return [span for span in self.spans if span.start <= step <= span.end]


def _label_spans(path: Path, annotator: str | None) -> tuple[list[SpanOverlay], str | None]:
    try:
        document = read_labels(path)
    except LabelStoreError as exc:
        return [], f"labels of {path} could not be read ({exc}); the clip shows the automatic spans only"
    names = [n for n in sorted(document.annotators) if n != AUTO_ANNOTATOR]
    if annotator is not None:
        if annotator not in names:
            known = ", ".join(names) or "none"
            raise ExportError(f"{path} has no labels by {annotator!r} (annotators: {known})")
        names = [annotator]
    spans: list[SpanOverlay] = []
    for name in names:
        for span in document.annotators[name].spans:
            if span.status != "accepted":
                continue  # a pending suggestion is not a label
            kind = span.kind or "unclassified"
            title = {"aware": "Aware deadlock", "unaware": "Unaware deadlock"}.get(kind, "Deadlock (unclassified)")
            spans.append(SpanOverlay(span.start, span.end, f"{title} · {name}", kind))
    return spans, None


def _automatic_spans(result: EpisodeResult | None) -> list[SpanOverlay]:
    spans: list[SpanOverlay] = []
    for found in deadlock_steps({"metrics": result.metrics} if result is not None else None):
        awareness = found.awareness if found.awareness in ("aware", "unaware") else "unclassified"
        spans.append(SpanOverlay(found.start, found.end, f"Deadlock suggested ({awareness}) {found.start}–{found.end}",
                                 "suggested"))
    return spans


def _uncovered(automatic: list[SpanOverlay], labelled: list[SpanOverlay]) -> list[SpanOverlay]:
    """Automatic spans that no human label overlaps: a label is the better word on the same steps."""
    return [a for a in automatic if not any(a.start <= h.end and h.start <= a.end for h in labelled)]


def load_clip_episode(path: Path, annotator: str | None = None) -> ClipEpisode:
    """Raises ExportError with a message that names the file and what is wrong."""
    path = Path(path)
    if not path.is_file():
        raise ExportError(f"{path} does not exist or is not a file")
    try:
        episode = load_episode(path)
    except EpisodeFileError as exc:
        raise ExportError(str(exc)) from None
    except (KeyError, OSError, ValueError, TypeError, RuntimeError) as exc:
        raise ExportError(f"{path} is damaged or not a complete episode file ({type(exc).__name__}: {exc}); "
                          "it was opened read-only and left unchanged") from None
    if "current" not in episode.image_sets:
        raise ExportError(f"{path} stores no step images ('current'), so there is nothing to show")
    if len(episode) == 0:
        raise ExportError(f"{path} holds no complete step; there is nothing to put in a clip")
    spans, warning = _label_spans(path, annotator)
    return _clip_episode(episode, path, spans, warning)


def _clip_episode(episode: Episode, path: Path, spans: list[SpanOverlay], warning: str | None) -> ClipEpisode:
    records = episode.steps()
    samples = episode.sample_table
    return ClipEpisode(path, episode.metadata, episode.result, episode.step_numbers.copy(),
                       np.fromiter((r.tick_before for r in records), np.int64, len(records)),
                       np.fromiter((r.tick_after for r in records), np.int64, len(records)), records,
                       episode.frame_ticks, samples["tick"].astype(np.int64),
                       np.column_stack([samples["x"], samples["y"]]).astype(float).reshape(-1, 2),
                       samples["facing"].astype(float), spans + _uncovered(_automatic_spans(episode.result), spans),
                       warning)
