"""Cohen's kappa between two annotators (a human, or AUTO_ANNOTATOR for the automatic suggestions).

* Failure category: one item per episode where both gave a category. A human's category counts only
  once confirmed (an unconfirmed one is the pre-filled suggestion, not their judgement).
* Deadlock steps: one item per step of every episode both labelled. Each step is "none" or the kind of
  the accepted span covering it: "aware", "unaware" or "unclassified" (scheme "kind"), or just
  "deadlock" (scheme "binary"). Pending suggestions are not a judgement yet and count as "none".

Degenerate cases, so nothing divides by zero: with no items kappa is None (undefined, shown as "n/a");
when chance agreement is 1 (both annotators used one and the same class for every item, so they agree
on everything) kappa is 1.0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from core.labels.episodes import EpisodeLabels
from core.labels.model import AnnotatorLabels

Scheme = Literal["kind", "binary"]
NONE, DEADLOCK, UNCLASSIFIED = "none", "deadlock", "unclassified"


@dataclass(frozen=True)
class Kappa:
    kappa: float | None  # None: nothing to compare
    observed: float  # fraction of items on which the two agree
    expected: float  # agreement expected by chance from each one's class frequencies
    n: int  # items compared (episodes or steps)
    episodes: int = 0  # episodes that contributed

    def describe(self) -> str:
        value = "n/a" if self.kappa is None else f"{self.kappa:.3f}"
        return (f"kappa {value} (observed {self.observed:.3f}, chance {self.expected:.3f}, "
                f"{self.n} items from {self.episodes} episodes)")


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable], episodes: int = 0) -> Kappa:
    if len(a) != len(b):
        raise ValueError(f"both annotators must rate the same items ({len(a)} vs {len(b)})")
    n = len(a)
    if n == 0:
        return Kappa(None, 0.0, 0.0, 0, episodes)
    agreed = sum(x == y for x, y in zip(a, b))
    count_a, count_b = Counter(a), Counter(b)
    chance = sum(count_a[label] * count_b[label] for label in count_a)  # in units of 1 / n²
    if chance == n * n:  # one shared class throughout: identical ratings
        return Kappa(1.0, 1.0, 1.0, n, episodes)
    observed, expected = agreed / n, chance / (n * n)
    return Kappa((observed - expected) / (1 - expected), observed, expected, n, episodes)


def step_classes(labels: AnnotatorLabels, step_count: int, scheme: Scheme = "kind") -> list[str]:
    """The class of each step 1..step_count."""
    classes = [NONE] * step_count
    for span in labels.spans:
        if span.status != "accepted":
            continue
        label = DEADLOCK if scheme == "binary" else (span.kind or UNCLASSIFIED)
        for step in range(span.start, min(span.end, step_count) + 1):
            classes[step - 1] = label
    return classes


def category_agreement(episodes: Iterable[EpisodeLabels], a: str, b: str) -> Kappa:
    ratings_a: list[str] = []
    ratings_b: list[str] = []
    for episode in episodes:
        first, second = _category(episode.annotator(a)), _category(episode.annotator(b))
        if first is not None and second is not None:
            ratings_a.append(first)
            ratings_b.append(second)
    return cohen_kappa(ratings_a, ratings_b, episodes=len(ratings_a))


def step_agreement(episodes: Iterable[EpisodeLabels], a: str, b: str, scheme: Scheme = "kind") -> Kappa:
    ratings_a: list[str] = []
    ratings_b: list[str] = []
    count = 0
    for episode in episodes:
        first, second = episode.annotator(a), episode.annotator(b)
        if first is None or second is None:
            continue
        count += 1
        ratings_a += step_classes(first, episode.step_count, scheme)
        ratings_b += step_classes(second, episode.step_count, scheme)
    return cohen_kappa(ratings_a, ratings_b, episodes=count)


def _category(labels: AnnotatorLabels | None) -> str | None:
    if labels is None or not labels.category_confirmed:
        return None
    return labels.failure_category
