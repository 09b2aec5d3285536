"""The label model: deadlock spans and a failure category per annotator, and the undoable editing session.

Pure data and editing, no I/O (storage: store.py; schema: docs/labels-format.md). Steps are the 1-based
step numbers of /steps/table's `step` column; a span covers start..end inclusive.

Spans of one annotator are kept sorted and never overlap. Adding a span that overlaps another is
refused with a ValueError rather than merged: a silent merge could swallow a span's classification or
note, and the user has `merge_spans` to do it on purpose. Dragging an edge (`set_edge`) instead stops at
the neighbouring span, as a drag handle would.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Literal, cast

from core.episode.metrics import AWARE, CATEGORIES, UNAWARE

LABELS_FORMAT_VERSION = 1
AUTO_ANNOTATOR = "auto"  # the automatic suggestions, as an annotator for agreement; no human may use it
SpanKind = Literal["aware", "unaware"]
SpanOrigin = Literal["suggested", "human"]
SpanStatus = Literal["pending", "accepted", "rejected"]
KINDS: tuple[SpanKind, ...] = ("aware", "unaware")
ORIGINS: tuple[str, ...] = ("suggested", "human")
STATUSES: tuple[str, ...] = ("pending", "accepted", "rejected")


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_text(value: object) -> bool:  # labels come from files: a field typed str may hold any JSON value
    return isinstance(value, str)


@dataclass(frozen=True)
class DeadlockLabel:
    """One annotator's label on a deadlock: steps start..end (step numbers, inclusive), its kind and notes.

    What a person (or a suggestion) says about a span; the deadlock the metrics detect on their own is
    core.episode.metrics.DeadlockSpan. `kind` None = not yet classified. Only suggestions are "pending" or
    "rejected".
    """

    start: int
    end: int
    kind: SpanKind | None = None
    awareness_step: int | None = None  # first step where the agent shows it knows it is stuck
    note: str = ""
    origin: SpanOrigin = "human"
    status: SpanStatus = "accepted"
    created: str | None = None
    updated: str | None = None

    def __post_init__(self) -> None:
        if not (_is_int(self.start) and _is_int(self.end)) or not 1 <= self.start <= self.end:
            raise ValueError(f"a span needs whole step numbers 1 <= start <= end, got {self.start}..{self.end}")
        if self.kind is not None and self.kind not in KINDS:
            raise ValueError(f"span kind must be one of {KINDS} or None, got {self.kind!r}")
        if self.awareness_step is not None and not (
                _is_int(self.awareness_step) and self.start <= self.awareness_step <= self.end):
            raise ValueError(f"awareness step {self.awareness_step} lies outside the span {self.start}..{self.end}")
        if not _is_text(self.note):
            raise ValueError("a span's note must be text")
        if self.origin not in ORIGINS or self.status not in STATUSES:
            raise ValueError(f"bad span origin/status {self.origin!r}/{self.status!r}")
        if self.origin == "human" and self.status != "accepted":
            raise ValueError("only suggestions can be pending or rejected")

    def covers(self, step: int) -> bool:
        return self.start <= step <= self.end

    @property
    def pending(self) -> bool:
        return self.status == "pending"

    def to_json(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "kind": self.kind, "awareness_step": self.awareness_step,
                "note": self.note, "origin": self.origin, "status": self.status, "created": self.created,
                "updated": self.updated}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DeadlockLabel:
        return cls(start=data["start"], end=data["end"], kind=data.get("kind"),
                   awareness_step=data.get("awareness_step"), note=data.get("note", ""),
                   origin=data.get("origin", "human"), status=data.get("status", "accepted"),
                   created=data.get("created"), updated=data.get("updated"))


@dataclass(frozen=True)
class AnnotatorLabels:
    """One annotator's labels for one episode. Rejected suggestions are kept apart, out of the span
    order, so a rejection is remembered (and not suggested again) without blocking that range."""

    annotator: str
    spans: tuple[DeadlockLabel, ...] = ()
    rejected: tuple[DeadlockLabel, ...] = ()
    failure_category: str | None = None
    category_confirmed: bool = False  # False: a pre-filled suggestion nobody has confirmed yet
    updated: str = ""  # ISO-8601 UTC of the last edit

    def __post_init__(self) -> None:
        if not _is_text(self.annotator) or not self.annotator.strip():
            raise ValueError("an annotator needs a name")
        for before, after in zip(self.spans, self.spans[1:]):
            if after.start <= before.end:
                raise ValueError(f"spans {before.start}..{before.end} and {after.start}..{after.end} "
                                 "overlap or are out of order")
        if any(s.status == "rejected" for s in self.spans) or any(s.status != "rejected" for s in self.rejected):
            raise ValueError("rejected suggestions belong in `rejected`, and only they do")
        if self.failure_category is not None and self.failure_category not in CATEGORIES:
            raise ValueError(f"failure category must be one of {CATEGORIES}, got {self.failure_category!r}")
        if self.category_confirmed and self.failure_category is None:
            raise ValueError("cannot confirm an empty failure category")

    def to_json(self) -> dict[str, Any]:
        return {"annotator": self.annotator, "spans": [s.to_json() for s in self.spans],
                "rejected": [s.to_json() for s in self.rejected], "failure_category": self.failure_category,
                "category_confirmed": self.category_confirmed, "updated": self.updated}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AnnotatorLabels:
        return cls(annotator=data["annotator"], spans=tuple(DeadlockLabel.from_json(s) for s in data.get("spans", ())),
                   rejected=tuple(DeadlockLabel.from_json(s) for s in data.get("rejected", ())),
                   failure_category=data.get("failure_category"),
                   category_confirmed=bool(data.get("category_confirmed", False)), updated=data.get("updated", ""))


@dataclass(frozen=True)
class LabelDocument:
    """Everything stored in one episode file: every annotator's labels, side by side."""

    annotators: Mapping[str, AnnotatorLabels] = field(default_factory=dict[str, AnnotatorLabels])
    format_version: int = LABELS_FORMAT_VERSION

    def with_annotator(self, labels: AnnotatorLabels) -> LabelDocument:
        return replace(self, annotators={**self.annotators, labels.annotator: labels})

    def to_json(self) -> dict[str, Any]:
        return {"format_version": self.format_version,
                "annotators": {name: labels.to_json() for name, labels in sorted(self.annotators.items())}}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LabelDocument:
        annotators = {name: AnnotatorLabels.from_json(value) for name, value in data.get("annotators", {}).items()}
        if any(name != labels.annotator for name, labels in annotators.items()):
            raise ValueError("an annotator entry is filed under another annotator's name")
        return cls(annotators=annotators, format_version=int(data["format_version"]))


@dataclass(frozen=True)
class SuggestedSpan:
    """A deadlock span as the metrics found it, in step numbers."""

    start: int
    end: int
    recovered: bool
    awareness: str | None = None       # aware | unaware | unclassified; None in files before metrics v2
    awareness_step: int | None = None


def deadlock_steps(result: Mapping[str, Any] | None) -> list[SuggestedSpan]:
    """metrics.deadlocks in step numbers. Metrics v2 writes objects keyed by step number; files written
    before it hold [start, end, recovered] lists of 0-based fact indices, where index i is step i + 1."""
    if not result:
        return []
    found: list[SuggestedSpan] = []
    metrics: Mapping[str, Any] = result.get("metrics") or {}
    deadlocks: list[Any] = metrics.get("deadlocks") or []  # null in an unjudged episode: no positions, no spans
    for item in deadlocks:
        if isinstance(item, Mapping):
            item = cast("Mapping[str, Any]", item)  # an object from the result's JSON
            found.append(SuggestedSpan(int(item["start"]), int(item["end"]), bool(item.get("recovered")),
                                       item.get("awareness"), item.get("awareness_step")))
        else:
            start, end, recovered = item
            found.append(SuggestedSpan(int(start) + 1, int(end) + 1, bool(recovered)))
    return found


def suggested_spans(result: Mapping[str, Any] | None, status: SpanStatus = "pending",
                    created: str | None = None) -> tuple[DeadlockLabel, ...]:
    """The automatic deadlock candidates, pre-classified where the agent's own words decided it (aware or
    unaware); unclassified spans are left for the annotator. Older files only classified the final span."""
    found = deadlock_steps(result)
    category = (result or {}).get("failure_category_suggestion")
    spans: list[DeadlockLabel] = []
    for index, suggestion in enumerate(found):
        kind: SpanKind | None = None
        awareness_step = None
        if suggestion.awareness in KINDS:
            kind = suggestion.awareness
        elif suggestion.awareness is None and index == len(found) - 1 and not suggestion.recovered:
            kind = "aware" if category == AWARE else "unaware" if category == UNAWARE else None
        if kind == "aware" and suggestion.awareness_step is not None:
            # The reply that first said "stuck" may come right after the span's last IM.
            awareness_step = min(max(int(suggestion.awareness_step), suggestion.start), suggestion.end)
        spans.append(DeadlockLabel(suggestion.start, suggestion.end, kind=kind, awareness_step=awareness_step,
                          origin="suggested", status=status, created=created, updated=created))
    return tuple(spans)


def suggested_labels(annotator: str, result: Mapping[str, Any] | None, now: str = "") -> AnnotatorLabels:
    """A fresh annotator's starting point: pending suggestions and the unconfirmed suggested category."""
    category = (result or {}).get("failure_category_suggestion")
    return AnnotatorLabels(annotator, spans=suggested_spans(result, "pending", now or None),
                           failure_category=category if category in CATEGORIES else None, updated=now)


def automatic_labels(result: Mapping[str, Any] | None) -> AnnotatorLabels:
    """The automatic suggestions as an annotator (AUTO_ANNOTATOR), every judgement taken as given."""
    category = (result or {}).get("failure_category_suggestion")
    category = category if category in CATEGORIES else None
    return AnnotatorLabels(AUTO_ANNOTATOR, spans=suggested_spans(result, "accepted"), failure_category=category,
                           category_confirmed=category is not None)


@dataclass(frozen=True)
class Edit:
    """One undoable command: the labels before and after it (immutable snapshots, so undo is exact)."""

    description: str
    before: AnnotatorLabels
    after: AnnotatorLabels


class LabelEditor:
    """One annotator's editing session on one episode. Every operation is an `Edit` on the undo stack;
    `on_change` callbacks run after every edit, undo, redo and save mark (e.g. to redraw or autosave)."""

    def __init__(self, labels: AnnotatorLabels, step_count: int | None = None,
                 clock: Callable[[], str] = utc_now) -> None:
        self._labels = labels
        self._saved: AnnotatorLabels | None = labels  # what is on disk (None: unknown); dirty = differs from it
        self.step_count = step_count
        self._clock = clock
        self._undo: list[Edit] = []
        self._redo: list[Edit] = []
        self.on_change: list[Callable[[], None]] = []

    @classmethod
    def for_episode(cls, annotator: str, result: Mapping[str, Any] | None, step_count: int | None,
                    document: LabelDocument | None = None, clock: Callable[[], str] = utc_now) -> LabelEditor:
        """Resume the annotator's saved labels, or start from the automatic suggestions (not dirty either way)."""
        saved = document.annotators.get(annotator) if document is not None else None
        if saved is None:
            saved = suggested_labels(annotator, result, clock())
        return cls(saved, step_count, clock)

    # -- state -------------------------------------------------------------------------------
    @property
    def labels(self) -> AnnotatorLabels:
        return self._labels

    @property
    def spans(self) -> tuple[DeadlockLabel, ...]:
        return self._labels.spans

    @property
    def dirty(self) -> bool:
        return self._labels != self._saved

    @property
    def can_undo(self) -> bool:
        return bool(self._undo)

    @property
    def can_redo(self) -> bool:
        return bool(self._redo)

    @property
    def undo_text(self) -> str:
        return self._undo[-1].description if self._undo else ""

    @property
    def redo_text(self) -> str:
        return self._redo[-1].description if self._redo else ""

    def resume_unsaved(self, labels: AnnotatorLabels) -> None:
        """Labels edited earlier whose save failed: shown again and dirty, so they are saved again. Not an
        undoable edit (there is nothing on disk to go back to), and the undo history starts afresh."""
        self._labels = labels
        self._undo.clear()
        self._redo.clear()
        self._notify()

    def mark_save_failed(self) -> None:
        """A save these labels were counted as written by failed: what the file holds is unknown, so the
        labels are dirty until a save succeeds."""
        self._saved = None
        self._notify()

    def mark_saved(self, labels: AnnotatorLabels | None = None) -> None:
        self._saved = self._labels if labels is None else labels
        self._notify()

    def span_at(self, step: int) -> int | None:
        return next((i for i, span in enumerate(self.spans) if span.covers(step)), None)

    def next_candidate(self, step: int) -> int | None:
        """Start step of the first span (suggested or labelled) starting strictly after `step`."""
        return min((s.start for s in self.spans if s.start > step), default=None)

    def previous_candidate(self, step: int) -> int | None:
        return max((s.start for s in self.spans if s.start < step), default=None)

    # -- undo --------------------------------------------------------------------------------
    def undo(self) -> bool:
        if not self._undo:
            return False
        edit = self._undo.pop()
        self._redo.append(edit)
        self._labels = edit.before
        self._notify()
        return True

    def redo(self) -> bool:
        if not self._redo:
            return False
        edit = self._redo.pop()
        self._undo.append(edit)
        self._labels = edit.after
        self._notify()
        return True

    # -- spans -------------------------------------------------------------------------------
    def add_span(self, start: int, end: int, kind: SpanKind | None = None, note: str = "") -> int:
        """Add a human span; refuses (ValueError) one that overlaps an existing span. Returns its index."""
        self._check_range(start, end)
        for index, other in enumerate(self.spans):
            if other.start <= end and start <= other.end:
                raise ValueError(f"steps {start}..{end} overlap span #{index} ({other.start}..{other.end}); "
                                 "drag that span's edges or merge instead")
        now = self._clock()
        span = DeadlockLabel(start, end, kind=kind, note=note, created=now, updated=now)
        spans = tuple(sorted((*self.spans, span), key=lambda s: s.start))
        self._apply(f"Add span {start}-{end}", spans=spans)
        return spans.index(span)

    def set_edge(self, index: int, start: int | None = None, end: int | None = None) -> DeadlockLabel:
        """Move a span's edges, stopping at the neighbouring spans and the episode's ends, and keeping
        start <= end (a dragged edge stops at the other one). The awareness step is pulled inside."""
        span = self._span(index)
        low = self.spans[index - 1].end + 1 if index > 0 else 1
        high = self.spans[index + 1].start - 1 if index + 1 < len(self.spans) else self.step_count
        if start is not None and end is not None and start > end:
            raise ValueError(f"start {start} is after end {end}")
        new_start = span.start if start is None else min(max(start, low), span.end if end is None else end)
        new_end = span.end if end is None else max(end, new_start)
        if high is not None:
            new_end = min(new_end, high)
        new_start = min(new_start, new_end)
        awareness = span.awareness_step
        if awareness is not None:
            awareness = min(max(awareness, new_start), new_end)
        changed = self._edited(span, start=new_start, end=new_end, awareness_step=awareness)
        self._apply(f"Move edges of span {span.start}-{span.end}", index=index, span=changed)
        return self.spans[index]

    trim = set_edge  # trimming a suggestion is dragging its edges (and accepts it)

    def delete_span(self, index: int) -> None:
        span = self._span(index)
        self._apply(f"Delete span {span.start}-{span.end}", spans=self.spans[:index] + self.spans[index + 1:])

    def set_kind(self, index: int, kind: SpanKind | None) -> None:
        span = self._span(index)
        self._apply(f"Set span {span.start}-{span.end} to {kind or 'unclassified'}", index=index,
                    span=self._edited(span, kind=kind))

    def set_awareness_step(self, index: int, step: int | None) -> None:
        span = self._span(index)
        self._apply(f"Set awareness step of span {span.start}-{span.end}", index=index,
                    span=self._edited(span, awareness_step=step))

    def set_note(self, index: int, note: str) -> None:
        span = self._span(index)
        self._apply(f"Edit note of span {span.start}-{span.end}", index=index, span=self._edited(span, note=note))

    def accept_suggestion(self, index: int) -> None:
        span = self._suggestion(index)
        self._apply(f"Accept suggestion {span.start}-{span.end}", index=index, span=self._edited(span),
                    accepting=True)

    def reject_suggestion(self, index: int) -> None:
        span = self._suggestion(index)
        rejected = replace(span, status="rejected", updated=self._clock())
        self._apply(f"Reject suggestion {span.start}-{span.end}", spans=self.spans[:index] + self.spans[index + 1:],
                    rejected=(*self._labels.rejected, rejected))

    def split_span(self, index: int, at_step: int) -> tuple[int, int]:
        """Split into start..at_step-1 and at_step..end; both keep the kind and note."""
        span = self._span(index)
        if not span.start < at_step <= span.end:
            raise ValueError(f"can only split span {span.start}..{span.end} at a step in {span.start + 1}..{span.end}")
        aware = span.awareness_step  # goes with the half that contains it
        left_aware = aware if aware is not None and aware < at_step else None
        right_aware = aware if aware is not None and aware >= at_step else None
        left = self._edited(span, end=at_step - 1, awareness_step=left_aware)
        right = replace(self._edited(span, start=at_step, awareness_step=right_aware), created=left.updated)
        self._apply(f"Split span {span.start}-{span.end} at {at_step}",
                    spans=(*self.spans[:index], left, right, *self.spans[index + 1:]))
        return index, index + 1

    def merge_spans(self, i: int, j: int) -> int:
        """Merge spans i..j (and any between) into one covering them all. Kinds that agree are kept, kinds
        that conflict become unclassified; the earliest awareness step is kept and notes are joined."""
        low, high = sorted((i, j))
        if low == high:
            raise ValueError("merge needs two different spans")
        for index in (low, high):
            self._span(index)
        group = self.spans[low:high + 1]
        kinds: set[SpanKind] = {s.kind for s in group if s.kind is not None}
        awareness = [s.awareness_step for s in group if s.awareness_step is not None]
        notes = list(dict.fromkeys(s.note for s in group if s.note))
        created = [s.created for s in group if s.created]
        now = self._clock()
        merged = DeadlockLabel(group[0].start, group[-1].end, kind=kinds.pop() if len(kinds) == 1 else None,
                      awareness_step=min(awareness, default=None), note=" | ".join(notes),
                      created=min(created, default=now), updated=now)
        self._apply(f"Merge spans {merged.start}-{merged.end}", spans=(*self.spans[:low], merged,
                                                                        *self.spans[high + 1:]))
        return low

    # -- failure category --------------------------------------------------------------------
    def set_failure_category(self, category: str | None) -> None:
        """The annotator's own choice, so it counts as confirmed (None clears it)."""
        self._apply(f"Set failure category to {category or 'none'}", failure_category=category,
                    category_confirmed=category is not None)

    def confirm_failure_category(self) -> None:
        if self._labels.failure_category is None:
            raise ValueError("there is no failure category to confirm; choose one")
        self._apply(f"Confirm failure category {self._labels.failure_category}", category_confirmed=True)

    # -- internals ---------------------------------------------------------------------------
    def _span(self, index: int) -> DeadlockLabel:
        if not 0 <= index < len(self.spans):
            raise IndexError(f"no span #{index} (there are {len(self.spans)})")
        return self.spans[index]

    def _suggestion(self, index: int) -> DeadlockLabel:
        span = self._span(index)
        if not span.pending:
            raise ValueError(f"span #{index} ({span.start}..{span.end}) is not a pending suggestion")
        return span

    def _check_range(self, start: int, end: int) -> None:
        if self.step_count is not None and end > self.step_count:
            raise ValueError(f"step {end} is past the episode's last step {self.step_count}")
        DeadlockLabel(start, end)  # raises on a bad range

    def _edited(self, span: DeadlockLabel, **changes: Any) -> DeadlockLabel:
        """Any edit of a suggestion accepts it and makes it the annotator's own."""
        return replace(span, **changes, origin="human", status="accepted", updated=self._clock())

    def _apply(self, description: str, index: int | None = None, span: DeadlockLabel | None = None,
               accepting: bool = False, **changes: Any) -> None:
        if index is not None and span is not None:
            old = self.spans[index]
            if not accepting and span == replace(old, updated=span.updated, origin=span.origin, status=span.status):
                # Nothing the user would see changed (a click on an edge, a note left as it was): no undo
                # entry, not dirty, and a pending suggestion stays pending; only an explicit accept accepts.
                return
            changes["spans"] = (*self.spans[:index], span, *self.spans[index + 1:])
        after = replace(self._labels, **changes, updated=self._clock())
        if replace(after, updated=self._labels.updated) == self._labels:
            return
        self._undo.append(Edit(description, self._labels, after))
        self._redo.clear()
        self._labels = after
        self._notify()

    def _notify(self) -> None:
        for callback in list(self.on_change):
            callback()
