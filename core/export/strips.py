"""A failed episode's deadlock span as a strip of thumbnails, for the HTML report.

Which span: the last one a person labelled (accepted), else the last one the metrics suggested, else
(an episode that failed without a deadlock) its last steps. Thumbnails are the step images the agent
saw, evenly spread over the span, JPEG-encoded for inlining.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from core.episode import load_episode
from core.labels.model import AUTO_ANNOTATOR, deadlock_steps
from core.labels.store import LabelStoreError, read_labels
from core.recording.reader import EpisodeFileError, EpisodeReader

THUMBNAILS = 6
THUMB_WIDTH = 160
LAST_STEPS = 8
JPEG_QUALITY = 75


@dataclass(frozen=True)
class Thumbnail:
    step: int
    jpeg: bytes
    self_assessment: str


@dataclass
class Strip:
    start: int                 # step numbers, inclusive
    end: int
    origin: str                # what the span is: "labelled by NAME (aware)", "suggested (unaware)", "last steps"
    thumbnails: list[Thumbnail] = field(default_factory=list[Thumbnail])
    said: tuple[int, str, str] | None = None  # (step, self-assessment, thought) at the span's last step
    error: str | None = None


def _labelled_span(path: Path) -> tuple[int, int, str] | None:
    try:
        document = read_labels(path)
    except LabelStoreError:
        return None
    spans = [(span.end, span.start, name, span.kind) for name, labels in document.annotators.items()
             if name != AUTO_ANNOTATOR for span in labels.spans if span.status == "accepted"]
    if not spans:
        return None
    end, start, name, kind = max(spans)
    return start, end, f"labelled by {name} ({kind or 'unclassified'})"


def choose_span(path: Path, row: dict[str, Any], steps: np.ndarray) -> tuple[int, int, str]:
    labelled = _labelled_span(path)
    if labelled is not None:
        return labelled
    found = deadlock_steps({"metrics": row.get("metrics") or {}})
    if found:
        last = max(found, key=lambda span: span.end)
        return last.start, last.end, f"suggested by the metrics ({last.awareness or 'unclassified'})"
    first = int(steps[max(0, len(steps) - LAST_STEPS)])
    return first, int(steps[-1]), "no deadlock span: the last steps"


def _spread(positions: list[int], count: int) -> list[int]:
    if len(positions) <= count:
        return positions
    picks = np.linspace(0, len(positions) - 1, count).round().astype(int)
    return [positions[i] for i in picks]


def deadlock_strip(path: Path, row: dict[str, Any]) -> Strip:
    """Never raises for a bad file: the strip then carries the error to show. The steps come from
    load_episode; only the thumbnails' images are read, one at a time."""
    try:
        episode = load_episode(path)
        steps = episode.step_numbers
        if len(steps) == 0:
            return Strip(0, 0, "", error=f"{path.name} holds no complete step")
        start, end, origin = choose_span(path, row, steps)
        inside = [int(i) for i in np.nonzero((steps >= start) & (steps <= end))[0]]
        strip = Strip(start, end, origin)
        with EpisodeReader(path) as reader:
            for position in _spread(inside, THUMBNAILS):
                image = reader.step_image("current", position)
                if image is None:
                    continue  # an intervention step has no image
                height = max(1, round(image.shape[0] * THUMB_WIDTH / image.shape[1]))
                small = cv2.resize(image, (THUMB_WIDTH, height), interpolation=cv2.INTER_AREA)
                ok, jpeg = cv2.imencode(".jpg", cv2.cvtColor(small, cv2.COLOR_RGB2BGR),
                                        [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
                if ok:
                    strip.thumbnails.append(Thumbnail(int(steps[position]), jpeg.tobytes(),
                                                      episode.step(position).self_assessment))
        if inside:
            last = episode.step(inside[-1])
            strip.said = (last.step, last.self_assessment,
                          last.decision.thought if last.decision is not None else "")
        return strip
    except (EpisodeFileError, KeyError, OSError, ValueError, RuntimeError, zlib.error) as exc:
        return Strip(0, 0, "", error=f"{path.name} could not be read ({exc})")
