"""EpisodePanes: the one set of panes that shows an Episode at a cursor, in Live and in Replay.

The frame, the observation strip, the reasoning (Live's list) or step details (Replay's), the trajectory's
steps and marks, the metrics bar and the timeline all read the same `Episode` (core/episode) at the same
`EpisodeCursor`. Live hands it the runner's episode as it plays and a cursor that follows the newest step;
Replay hands it a loaded one and a cursor moved by the user or playback. Where the images come from stays
with the view (the game's live feed, or the file's frame loader): it passes them to `show_images`.

Episode events fire on the thread that appends (the runner's). An EpisodeBridge re-emits them as a Qt
signal, which Qt queues to the panes' bound slot in the GUI thread: no widget is touched elsewhere.
Deadlock spans are keyed by step number (the metrics' and the labels'); only here do they become timeline
positions, through `Episode.index_of`.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import cv2
import numpy as np
from PySide6.QtCore import QObject, QTimer, Signal, Slot

from core.episode import AudioAppended, Episode, LabelsChanged, ResultSet, StepAppended, StepRecord, mark_kinds
from core.episode.model import MARK_KINDS
from core.step_sources import AGENT_SOURCES
from studio.episode_cursor import EpisodeCursor
from studio.sound_marks import bump_positions, step_has_bump
from widgets.frame_view import FrameView
from widgets.metrics_bar import MetricsBar
from widgets.observation_strip import ObservationStrip
from widgets.reasoning_panel import ReasoningPanel
from widgets.step_details import StepDetails
from widgets.timeline import Timeline, TimelineSpan
from widgets.trajectory_plot import TrajectoryPlot

SPANS_REFRESH_MS = 250  # a growing episode's deadlock spans cost O(steps): recomputed a few times a second
KIND_CAPTIONS = {"aware": "Aware", "unaware": "Unaware"}


class EpisodeBridge(QObject):
    """Carries an Episode's events from the appending thread into the GUI thread (a queued signal)."""

    sig_event = Signal(object, object)  # the episode, its event

    def __init__(self) -> None:
        super().__init__()
        self._unsubscribe: Callable[[], None] | None = None

    def attach(self, episode: Episode | None) -> None:
        self.detach()
        if episode is not None:
            self._unsubscribe = episode.subscribe(lambda event: self.sig_event.emit(episode, event))

    def detach(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None


class EpisodePanes(QObject):
    """`keep_frames`: how many recent steps' frames (half size) to keep for a cursor moved back (Live; Replay
    reads them from the file). `details_follow_cursor`: False when the view calls `show_details()` itself
    (Replay paints the frame first, then the slower panes)."""

    def __init__(self, cursor: EpisodeCursor, timeline: Timeline, trajectory: TrajectoryPlot, metrics: MetricsBar,
                 frame_view: FrameView, observations: ObservationStrip, reasoning: ReasoningPanel | None = None,
                 details: StepDetails | None = None, keep_frames: int = 0, details_follow_cursor: bool = True) -> None:
        super().__init__()
        self.cursor, self.timeline, self.trajectory, self.metrics = cursor, timeline, trajectory, metrics
        self.frame_view, self.observations, self.reasoning, self.details = frame_view, observations, reasoning, details
        self.keep_frames = keep_frames
        self.details_follow_cursor = details_follow_cursor
        self.episode: Episode | None = None
        self.label_spans: Sequence[Any] | None = None  # the labels' spans, once given: they replace suggestions
        self.selected_span: int | None = None
        self._trajectory_spans: list[tuple[int, int]] = []
        self._marks: dict[str, list[int]] = {kind: [] for kind in (*MARK_KINDS, "bump")}
        self._frames: OrderedDict[int, np.ndarray] = OrderedDict()
        self._bridge = EpisodeBridge()
        self._bridge.sig_event.connect(self._on_event)
        self._spans_timer = QTimer(self)
        self._spans_timer.setSingleShot(True)
        self._spans_timer.timeout.connect(self.refresh_spans)
        cursor.sig_moved.connect(self._on_cursor)

    # -- the episode --------------------------------------------------------------------------
    def set_episode(self, episode: Episode | None, budget: int = 0, draw_trajectory: bool = True,
                    bumps: Sequence[int] | None = None) -> None:
        """Show `episode` (None: none), with its steps so far; later steps arrive as events. `draw_trajectory`
        False: the view calls `draw_trajectory()` itself, in a later turn of the event loop (a long file's map).
        `bumps`: the steps whose sound holds a bump, found already (Replay, on its opening thread); else they are
        looked for here (a live episode has few steps so far)."""
        self._bridge.attach(None)
        self.episode, self.label_spans, self.selected_span = episode, None, None
        self._frames.clear()
        self._spans_timer.stop()
        self.metrics.reset(budget, judged=episode is None or episode.judged)
        if self.reasoning is not None:
            self.reasoning.clear()
        count = len(episode) if episode is not None else 0
        numbers = episode.step_numbers if episode is not None else np.zeros(0, np.int64)
        self.timeline.set_episode(count, numbers.tolist())
        self.timeline.set_spans([])
        self._marks = {kind: [] for kind in (*MARK_KINDS, "bump")}
        if episode is not None:
            self.trajectory.set_units(episode.position_units)
            if self.details is not None:
                self.details.set_units(episode.position_units)
            if self.reasoning is not None:
                for record in episode.steps(0, count):
                    self.reasoning.add_step(record)
            self._marks = {kind: [episode.index_of(step) for step in steps] for kind, steps in episode.marks().items()}
            self._marks["bump"] = list(bumps) if bumps is not None else bump_positions(episode)
            self._bridge.attach(episode)  # before the cursor moves: nothing appended from now on is missed
        self.timeline.set_marks(self._marks)
        if draw_trajectory:
            self.draw_trajectory()
        # A finished episode's spans were counted when it ended: no O(steps) count on the GUI thread here.
        result = episode.result if episode is not None else None
        self.refresh_spans(result.metrics.get("deadlocks") if result is not None else None)
        self.cursor.reset(count)

    def draw_trajectory(self) -> None:
        """Where each step ended, with its marks and the deadlock spans, on the trajectory plot."""
        episode = self.episode
        count = len(episode) if episode is not None else 0
        self.trajectory.set_steps(episode.step_numbers if episode is not None else np.zeros(0, np.int64),
                                  episode.positions if episode is not None else np.zeros((0, 2)))
        if episode is not None:
            self.trajectory.add_marks([(r.step, trajectory_mark(r)) for r in episode.steps(0, count)
                                       if r.intervention is not None or r.source == "human"])
        self.trajectory.set_deadlocks(self._trajectory_spans)

    def close(self) -> None:
        self._bridge.detach()
        self._spans_timer.stop()

    @Slot(object, object)
    def _on_event(self, source: Episode, event: object) -> None:
        episode = self.episode
        if episode is None or source is not episode:
            return  # from an episode replaced since (its queued events arrive late)
        if isinstance(event, StepAppended):
            if event.index < self.timeline.count:
                return  # already shown: set_episode read it before its queued event arrived
            self._add_step(episode, event.index, event.record, event.images)
        elif isinstance(event, ResultSet):
            self._marks["success"] = ([episode.index_of(event.result.success_step)]
                                      if event.result.success_step is not None and len(episode) else [])
            self.timeline.set_marks(self._marks)
            self.refresh_spans(event.result.metrics.get("deadlocks"))
            self.metrics.set_outcome(bool(event.result.success), event.result.end_reason)
        elif isinstance(event, AudioAppended):
            self._heard_step(episode, event.index)
        elif isinstance(event, LabelsChanged):
            self.label_spans = list(event.labels or [])
            self.refresh_spans()

    def _add_step(self, episode: Episode, index: int, record: StepRecord, images: Mapping[str, Any]) -> None:
        self.timeline.append_step(record.step)
        for kind in mark_kinds(record):
            self._marks[kind].append(index)
        self.timeline.set_marks(self._marks)
        if self.reasoning is not None:
            self.reasoning.add_step(record)
        if record.position_after is not None:
            self.trajectory.add_step(record.step, *record.position_after)
            if record.intervention is not None or record.source == "human":
                self.trajectory.add_mark(record.step, trajectory_mark(record))
        current = images.get("current")
        if self.keep_frames and current is not None:
            height, width = current.shape[:2]  # a copy at half size (cv2: 4x faster than a strided numpy copy)
            self._frames[index] = cv2.resize(current, (max(1, width // 2), max(1, height // 2)),
                                             interpolation=cv2.INTER_AREA)
            while len(self._frames) > self.keep_frames:
                self._frames.popitem(last=False)
        if self.cursor.follows_newest and self.cursor.following and record.source not in AGENT_SOURCES:
            # Live: the agent was not asked for this step, so the strip must not go on captioning its last one.
            self.observations.show_images(record.step, {}, record.source)
        if not self._spans_timer.isActive():
            self._spans_timer.start(SPANS_REFRESH_MS)
        self.cursor.grown(len(episode))

    def _heard_step(self, episode: Episode, index: int) -> None:
        """A step's sound was recorded (Live): mark it on the timeline if it holds a bump."""
        clip = episode.step_audio(index)
        if clip is None or not len(clip.samples) or index in self._marks["bump"]:
            return
        if step_has_bump(clip, episode.step_audio(index - 1) if index > 0 else None):
            self._marks["bump"].append(index)
            self.timeline.set_marks(self._marks)

    @property
    def bump_marks(self) -> list[int]:
        """The step positions marked for a bump heard in their sound."""
        return list(self._marks["bump"])

    # -- spans, keyed by step number --------------------------------------------------------------
    @Slot()
    def refresh_spans(self, deadlocks: Sequence[Mapping[str, Any]] | None = None) -> None:
        """The labels' spans if any were given, else the deadlocks the metrics suggest."""
        episode = self.episode
        if episode is None or len(episode) == 0:
            self.timeline.set_spans([])
            self._trajectory_spans = []
            self.trajectory.set_deadlocks([])
            return
        if self.label_spans is not None:
            spans = [(int(s.start), int(s.end), "suggested" if s.pending else (s.kind or "unclassified"),
                      KIND_CAPTIONS.get(s.kind or "", "" if s.pending else "?")) for s in self.label_spans]
        else:
            found = deadlocks if deadlocks is not None else [d.to_json() for d in episode.metrics().deadlocks]
            spans = [(int(d["start"]), int(d["end"]), "suggested", "") for d in found]
        self.timeline.set_spans([TimelineSpan(episode.index_of(a), episode.index_of(b), style, label)
                                 for a, b, style, label in spans], self.selected_span)
        self._trajectory_spans = [(a, b) for a, b, _, _ in spans]
        self.trajectory.set_deadlocks(self._trajectory_spans)

    # -- the cursor ------------------------------------------------------------------------------
    @Slot(int)
    def _on_cursor(self, index: int) -> None:
        if self.episode is None or index < 0:
            return
        self.timeline.set_cursor(index)
        if self.keep_frames and not self.cursor.following:
            kept = self._frames.get(index)
            if kept is not None:
                self.frame_view.show_frame(kept)
        if self.details_follow_cursor:
            self.show_details()

    @property
    def current_step(self) -> int:
        """The step number at the cursor (0 when there is none)."""
        episode, index = self.episode, self.cursor.index
        return episode.step(index).step if episode is not None and 0 <= index < len(episode) else 0

    def has_kept_frame(self, index: int) -> bool:
        return index in self._frames

    def show_details(self) -> None:
        """The step details, the trajectory's cursor and the metrics at the cursor."""
        episode, index = self.episode, self.cursor.index
        if episode is None or not 0 <= index < len(episode):
            return
        record = episode.step(index)
        if self.details is not None:
            self.details.show_record(record)
        following = self.cursor.follows_newest and self.cursor.following
        self.trajectory.set_cursor(None if following else record.step)  # live: the character's marker says it
        self.metrics.show_totals(episode.totals_at(index), episode.succeeded_by(index))

    def show_images(self, index: int, images: Mapping[str, Any], frame: bool = True) -> None:
        """The frame (unless `frame` is False: the view painted it already) and the observation strip for the
        step at `index`, with images from the view's source."""
        episode = self.episode
        current = images.get("current")
        if frame and current is not None:
            self.frame_view.show_frame(current)
        if episode is not None and 0 <= index < len(episode):
            record = episode.step(index)
            self.observations.show_images(record.step, dict(images), record.source)


def trajectory_mark(record: StepRecord) -> str:
    """How the trajectory marks a step: the intervention's kind, or `human`."""
    return record.intervention.kind if record.intervention is not None else "human"
