"""Each episode's failure category for the report: a human's confirmed label where one exists, otherwise
the automatic suggestion recorded in results.jsonl.

* A **human** category is one an annotator chose or confirmed (`category_confirmed`) and saved into the
  episode file (core/labels/store.py). A pre-filled suggestion nobody confirmed does not count.
* When several annotators confirmed different categories, the most common one is used; a tie goes to the
  category that comes first in TAXONOMY (Success, Unaware Deadlock, Aware Deadlock, Lost, Execution
  Failure), so the result never depends on who saved last. Such episodes are reported as `disputed`.
* A success met on a human's step is a Human-assisted success, not the agent's Success (outcome.py).
* Episodes that ended in an infrastructure error are not results and have no category: the report
  counts them apart (core/session/run_folder.py).
* An episode file that is missing or unreadable falls back to the automatic suggestion, with a warning.
* Deadlock spans by awareness, likewise: where a human annotator classified the episode's spans (accepted
  spans marked aware or unaware), the report counts that annotator's spans (the first such annotator by
  name); otherwise the agent's own self-assessments (the metrics' aware / unaware / unclassified).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from core.analysis.outcome import HUMAN_ASSISTED, human_assisted
from core.episode.metrics import (
    AWARE,
    AWARENESS_CLASSES,
    CATEGORIES,
    EXECUTION,
    LOST,
    SPAN_UNCLASSIFIED,
    SUCCESS,
    SUGGESTIONS,
    UNAWARE,
    UNCLASSIFIED,
)
from core.labels.model import AUTO_ANNOTATOR, LabelDocument
from core.labels.store import LabelStoreError, read_labels

# Unclassified Deadlock: the episode ended stuck, but the agent's words did not say whether it knew;
# only the automatic rule gives it, and a human label replaces it. Infrastructure errors are not results
# and are counted apart (core/session/run_folder.py).
# A success met on a human's step (core/analysis/outcome.py) is not the agent's: it has a category of its own.
TAXONOMY = (SUCCESS, HUMAN_ASSISTED, UNAWARE, AWARE, UNCLASSIFIED, LOST, EXECUTION)
HUMAN, AUTO = "human", "auto"


@dataclass(frozen=True)
class EpisodeCategory:
    category: str
    source: str  # HUMAN or AUTO
    annotators: tuple[str, ...] = ()  # the humans whose confirmed category was counted
    disputed: bool = False  # those humans did not all agree
    spans: Mapping[str, int] | None = None  # a human's span classification (aware/unaware/unclassified), if any


def human_spans(document: LabelDocument) -> dict[str, int] | None:
    """The awareness counts of the first human annotator (by name) who classified any of the episode's spans."""
    for name, labels in sorted(document.annotators.items()):
        accepted = [span for span in labels.spans if span.status == "accepted"]
        if name == AUTO_ANNOTATOR or not any(span.kind is not None for span in accepted):
            continue
        counts = Counter(span.kind or SPAN_UNCLASSIFIED for span in accepted)
        return {kind: counts.get(kind, 0) for kind in AWARENESS_CLASSES}
    return None


def human_category(document: LabelDocument) -> EpisodeCategory | None:
    """The confirmed human category of one episode's labels (rule in the module docstring), or None."""
    confirmed = {name: labels.failure_category for name, labels in sorted(document.annotators.items())
                 if name != AUTO_ANNOTATOR and labels.category_confirmed and labels.failure_category in CATEGORIES}
    if not confirmed:
        return None
    votes = Counter(confirmed.values())
    best = max(votes.values())
    category = next(c for c in CATEGORIES if votes.get(c) == best)
    return EpisodeCategory(category, HUMAN, tuple(confirmed), disputed=len(votes) > 1)


def automatic_category(row: Mapping[str, Any]) -> EpisodeCategory:
    if human_assisted(row):
        return EpisodeCategory(HUMAN_ASSISTED, AUTO)
    suggestion = row.get("failure_category_suggestion", LOST)
    return EpisodeCategory(suggestion if suggestion in SUGGESTIONS else LOST, AUTO)


def episode_category(folder: Path, row: Mapping[str, Any]) -> tuple[EpisodeCategory, str | None]:
    """One results.jsonl row's category, and a warning when its labels could not be read."""
    automatic = automatic_category(row)
    if not row.get("episode"):
        return automatic, None
    path = folder / row["episode"]
    if not path.is_file():
        return automatic, f"{path} is missing, so any human labels in it are not counted (automatic suggestion used)"
    try:
        document = read_labels(path)
    except LabelStoreError as exc:
        return automatic, f"labels of {path} could not be read ({exc}); automatic suggestion used"
    category = human_category(document) or automatic
    return replace(category, spans=human_spans(document)), None


def categorise(folder: Path, rows: Sequence[Mapping[str, Any]]) -> tuple[list[EpisodeCategory], list[str]]:
    """Every row's category (in order), and the warnings for episodes whose labels could not be read."""
    categories: list[EpisodeCategory] = []
    warnings: list[str] = []
    for row in rows:
        category, warning = episode_category(folder, row)
        categories.append(category)
        if warning:
            warnings.append(warning)
    return categories, warnings
