"""Episode: one episode as a growing, observable list of StepRecords plus its samples and result.

The runner appends to it while it plays; load_episode (core/episode/load.py) fills one from a file;
the recorder (core/episode/recorder.py) and the studio's panes subscribe to it. Views keep a cursor
(a 0-based step position) and read through `len`, `step(i)`, `steps(start, stop)`, `totals_at(i)`
and `metrics()`; events tell them when to look again. Thread-safe: one thread appends (the runner's),
any thread reads; events are delivered on the appending thread, in order (a GUI re-emits them into
its own thread). Images are passed along with their step's event for subscribers that store or show
them, and never kept here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np

from core.audio.clip import AudioClip, AudioLayout
from core.episode.metrics import EpisodeMetrics, GoalArea, episode_metrics, next_run_length
from core.episode.records import EpisodeResult, StepRecord
from core.episode.units import recorded_units
from core.evaluation.sample import StateSample
from core.recording.writer import SAMPLE_DTYPE, SAMPLE_FIELDS

MARK_KINDS = ("success", "intervention", "human", "parse_error")
Images = Mapping[str, "np.ndarray | None"]


# -- events: one channel, delivered in order ------------------------------------------------------
@dataclass(frozen=True)
class StepAppended:
    index: int                 # the step's 0-based position
    record: StepRecord
    # the images the agent was given (not kept by the episode)
    images: Images = field(default_factory=dict[str, np.ndarray | None])


@dataclass(frozen=True)
class SamplesAppended:
    samples: tuple[StateSample, ...]


@dataclass(frozen=True)
class FrameAppended:
    """A continuous frame recorded while a step executed (RunOptions.frame_every_ticks)."""

    tick: int
    pixels: np.ndarray


@dataclass(frozen=True)
class AudioAppended:
    """The sound of the ticks the step at `index` covered (docs/episode-format.md, /audio)."""

    index: int
    clip: AudioClip
    first_tick: int = 0   # the ticks it covers, inclusive (the step's tick_before + 1 .. where it ended)
    last_tick: int = -1


@dataclass(frozen=True)
class ResultSet:
    result: EpisodeResult


@dataclass(frozen=True)
class LabelsChanged:
    labels: Any                # the label document (core/labels), as the label store saved it


EpisodeEvent = StepAppended | SamplesAppended | FrameAppended | AudioAppended | ResultSet | LabelsChanged
Listener = Callable[[EpisodeEvent], None]


@dataclass(frozen=True)
class StepTotals:
    """Running totals after a step (what a metrics bar shows at the cursor)."""

    step: int
    ineffective_moves: int
    movement_steps: int
    consecutive_im: int
    tokens: int
    cost_usd: float
    latency_sum_s: float
    count: int

    @property
    def im_rate(self) -> float:
        return self.ineffective_moves / self.movement_steps if self.movement_steps else 0.0

    @property
    def mean_latency_s(self) -> float:
        return self.latency_sum_s / self.count if self.count else 0.0


def mark_kinds(record: StepRecord) -> list[str]:
    """What a timeline marks at this step (success aside, which the evaluator decides): one rule for every view."""
    kinds: list[str] = []
    if record.intervention is not None:
        kinds.append("intervention")
    if record.source == "human":
        kinds.append("human")
    if record.decision is not None and record.decision.parse_error:
        kinds.append("parse_error")
    return kinds


class Episode:
    def __init__(self, metadata: Mapping[str, Any] | None = None, path: Path | None = None,
                 image_sets: Sequence[str] = ("current",), reached_goal_area: bool = False) -> None:
        self.metadata: dict[str, Any] = dict(metadata or {})
        self.path = Path(path) if path is not None else None
        self.image_sets = list(image_sets)
        self.reached_goal_area = reached_goal_area
        self._steps: list[StepRecord] = []
        self._totals: list[StepTotals] = []
        self._numbers: np.ndarray | None = None
        self._positions: np.ndarray | None = None
        self._sample_chunks: list[np.ndarray] = []  # SAMPLE_DTYPE rows (docs/episode-format.md)
        self._sample_table: np.ndarray | None = None  # the chunks joined, until the next append
        self._frame_ticks: list[int] = []
        # Sound (issue 22): the format it is recorded in (None: none), each step's clip and each damaged step's reason.
        self.audio_format: AudioLayout | None = None
        self._audio: dict[int, AudioClip] = {}
        self._audio_ticks: dict[int, tuple[int, int]] = {}
        self._audio_problems: dict[int, str] = {}
        self._result: EpisodeResult | None = None
        self._success_step: int | None = None
        self._listeners: list[Listener] = []
        self._lock = threading.RLock()

    # -- subscribing -------------------------------------------------------------------------
    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener(event)` for every event from now on; returns the call that unsubscribes."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def _emit(self, event: EpisodeEvent) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            listener(event)

    # -- appending (the runner, or the loader) ----------------------------------------------
    def append_step(self, record: StepRecord, images: Images | None = None) -> int:
        """Add the next step; returns its position. Step numbers must increase."""
        with self._lock:
            if self._steps and record.step <= self._steps[-1].step:
                raise ValueError(f"step {record.step} does not follow step {self._steps[-1].step}")
            index = len(self._steps)
            self._steps.append(record)
            self._totals.append(self._next_totals(record))
        self._emit(StepAppended(index, record, dict(images or {})))
        return index

    def _next_totals(self, record: StepRecord) -> StepTotals:
        last = self._totals[-1] if self._totals else StepTotals(0, 0, 0, 0, 0, 0.0, 0.0, 0)
        facts = record.facts
        decision = record.decision
        return StepTotals(
            step=record.step, ineffective_moves=last.ineffective_moves + facts.ineffective,
            movement_steps=last.movement_steps + (facts.by_agent and facts.movement),
            consecutive_im=next_run_length(last.consecutive_im, facts),  # the one rule behind every IM count
            tokens=last.tokens + (decision.tokens if decision else 0),
            cost_usd=last.cost_usd + (decision.cost_usd if decision else 0.0),
            latency_sum_s=last.latency_sum_s + record.latency_s, count=last.count + 1)

    def append_samples(self, samples: Sequence[StateSample]) -> None:
        if not samples:
            return
        rows = np.array([tuple(getattr(s, name) for name, _ in SAMPLE_FIELDS) for s in samples], SAMPLE_DTYPE)
        with self._lock:
            self._sample_chunks.append(rows)
            self._sample_table = None
        self._emit(SamplesAppended(tuple(samples)))

    def append_sample_table(self, rows: np.ndarray) -> None:
        """Samples already in table form (a loaded file): kept as they are, without an event per sample."""
        with self._lock:
            self._sample_chunks.append(np.asarray(rows, SAMPLE_DTYPE))
            self._sample_table = None

    def append_frame(self, tick: int, pixels: np.ndarray) -> None:
        with self._lock:
            self._frame_ticks.append(int(tick))
        self._emit(FrameAppended(int(tick), pixels))

    def append_frame_ticks(self, ticks: Sequence[int] | np.ndarray) -> None:
        """Frames known by their ticks only (a loaded file reads the pixels on demand)."""
        with self._lock:
            self._frame_ticks.extend(int(t) for t in np.asarray(ticks).tolist())

    def append_audio(self, index: int, clip: AudioClip, first_tick: int = 0, last_tick: int = -1) -> None:
        """The sound of the step at position `index` (the runner adds it right after the step; a loaded file
        has it already). `first_tick`..`last_tick`: the ticks it covers."""
        with self._lock:
            if self.audio_format is None:
                self.audio_format = AudioLayout(int(clip.rate), int(clip.samples.shape[1]) if clip.samples.ndim == 2
                                                else 1)
            self._audio[index] = clip
            self._audio_ticks[index] = (int(first_tick), int(last_tick))
        self._emit(AudioAppended(index, clip, int(first_tick), int(last_tick)))

    def set_audio_problem(self, index: int, problem: str) -> None:
        """The step's sound could not be read (a loaded file): `problem` begins "damaged audio at step N"."""
        with self._lock:
            self._audio_problems[index] = problem

    def set_success_step(self, step: int | None) -> None:
        """The step the evaluator credited with success, known before the result (live views mark it)."""
        with self._lock:
            self._success_step = step

    def set_result(self, result: EpisodeResult) -> None:
        with self._lock:
            self._result = result
            if result.success_step is not None:
                self._success_step = result.success_step
        self._emit(ResultSet(result))

    def labels_changed(self, labels: Any) -> None:
        """Tell subscribers that the episode's labels were saved (the labels live in the file: core/labels)."""
        self._emit(LabelsChanged(labels))

    # -- reading (any thread) ---------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._steps)

    def step(self, index: int) -> StepRecord:
        """The step at 0-based position `index` (negative counts from the end)."""
        return self._steps[index]

    def steps(self, start: int = 0, stop: int | None = None) -> list[StepRecord]:
        with self._lock:
            return self._steps[start:stop]

    def __iter__(self) -> Iterator[StepRecord]:
        return iter(self.steps())

    @property
    def last(self) -> StepRecord | None:
        with self._lock:
            return self._steps[-1] if self._steps else None

    @property
    def result(self) -> EpisodeResult | None:
        return self._result

    @property
    def success_step(self) -> int | None:
        return self._success_step

    @property
    def step_numbers(self) -> np.ndarray:
        """The 1-based step numbers, by position (cached until the next append)."""
        with self._lock:
            if self._numbers is None or len(self._numbers) != len(self._steps):
                self._numbers = np.fromiter((s.step for s in self._steps), np.int64, len(self._steps))
            return self._numbers

    def index_of(self, step: int) -> int:
        """The position of step number `step` (the nearest one at or after it, clamped to the episode)."""
        numbers = self.step_numbers
        return int(np.clip(np.searchsorted(numbers, step), 0, max(0, len(numbers) - 1)))

    def totals_at(self, index: int) -> StepTotals:
        return self._totals[index]

    @property
    def consecutive_im(self) -> int:
        """The run of IMs the episode is in now (0 after an effective agent move or an external push)."""
        with self._lock:
            return self._totals[-1].consecutive_im if self._totals else 0

    @property
    def judged(self) -> bool:
        """False for free play on a game with no memory profile: no positions, no success (metadata `judged`;
        episodes recorded before it are all judged)."""
        return self.metadata.get("judged", True) is not False

    @property
    def position_units(self) -> str | None:
        return recorded_units(self.metadata)

    @property
    def unjudged_reason(self) -> str:
        """Why nothing judged the episode ("no memory profile"); "" when it was judged."""
        return "" if self.judged else str(self.metadata.get("unjudged") or "no memory profile")

    @property
    def goal_area(self) -> GoalArea | None:
        """Where the task's goal is (recorded with the episode since metrics v3), for the Execution Failure rule."""
        return GoalArea.from_json(self.metadata.get("goal_area"))

    def metrics(self, upto: int | None = None) -> EpisodeMetrics:
        """The paper's metrics over the first `upto` steps (all by default), from core/episode/metrics.py.
        An episode a user stopped is not judged: it gets no failure category."""
        with self._lock:
            chosen = self._steps[:upto]
            success = self._success_step is not None and any(s.step >= self._success_step for s in chosen)
            stopped = self._result is not None and self._result.end_reason == "stopped"
        return episode_metrics([s.facts for s in chosen], success, self.reached_goal_area, self.goal_area,
                               judged=not stopped)

    def succeeded_by(self, index: int) -> bool:
        """The success condition was met at or before the step at `index` (for a cursor): O(1)."""
        return self._success_step is not None and self._totals[index].step >= self._success_step

    # -- samples and frames -----------------------------------------------------------------
    @property
    def sample_table(self) -> np.ndarray:
        """Every evaluator sample so far, as /samples/table rows (fields: SAMPLE_DTYPE)."""
        with self._lock:
            if self._sample_table is None:
                self._sample_table = (np.concatenate(self._sample_chunks) if self._sample_chunks
                                      else np.zeros(0, SAMPLE_DTYPE))
                self._sample_chunks = [self._sample_table] if len(self._sample_table) else []
            return self._sample_table

    @property
    def path_xy(self) -> np.ndarray:
        """(m, 2): every sample's position, in order."""
        table = self.sample_table
        return np.column_stack([table["x"], table["y"]]).astype(float).reshape(-1, 2)

    @property
    def positions(self) -> np.ndarray:
        """(n, 2): where each step ended (NaN where unknown)."""
        with self._lock:
            if self._positions is None or len(self._positions) != len(self._steps):
                self._positions = np.array([s.position_after or (np.nan, np.nan) for s in self._steps],
                                           dtype=float).reshape(-1, 2)
            return self._positions

    @property
    def frame_ticks(self) -> np.ndarray:
        with self._lock:
            return np.asarray(self._frame_ticks, dtype=np.int64)

    def frames_between(self, index: int) -> np.ndarray:
        """Indices of the continuous frames recorded while the step at `index` was executing."""
        ticks = self.frame_ticks
        if len(ticks) == 0:
            return np.zeros(0, np.int64)
        record = self._steps[index]
        return np.nonzero((ticks > record.tick_before) & (ticks <= record.tick_after))[0]

    # -- sound ------------------------------------------------------------------------------
    def step_audio(self, index: int) -> AudioClip | None:
        """The sound of the step at `index`, or None: the step has none (sound off or unavailable, a file from
        before sound was recorded, a step whose sound was not kept, or damaged: audio_problem says)."""
        with self._lock:
            return self._audio.get(index)

    def step_audio_ticks(self, index: int) -> tuple[int, int] | None:
        """The ticks (first, last, inclusive) the step's sound covers: its tick_before + 1 to where the step, and
        any push an intervention made after it, ended. None where the step has no sound."""
        with self._lock:
            return self._audio_ticks.get(index)

    def audio_problem(self, index: int) -> str | None:
        """Why the step's recorded sound cannot be played ("damaged audio at step N: ..."), or None."""
        with self._lock:
            return self._audio_problems.get(index)

    @property
    def audio_problems(self) -> dict[int, str]:
        with self._lock:
            return dict(self._audio_problems)

    @property
    def audio_state(self) -> str:
        """"on" (the sound was recorded), "off" (the user turned the game's sound off) or "unavailable" (the game
        offers none; also every file recorded before sound was)."""
        state = self.metadata.get("audio")
        return state if state in ("on", "off", "unavailable") else "unavailable"

    # -- descriptions -----------------------------------------------------------------------
    def marks(self) -> dict[str, list[int]]:
        """Step numbers to mark on a timeline, by kind."""
        marks: dict[str, list[int]] = {kind: [] for kind in MARK_KINDS}
        for record in self.steps():
            for kind in mark_kinds(record):
                marks[kind].append(record.step)
        if self._success_step is not None:
            marks["success"].append(self._success_step)
        return marks

    def map_outline(self) -> list[tuple[str, np.ndarray]]:
        """The world's footprints recorded with the episode (empty for games that give none)."""
        shapes: list[Any] = self.metadata.get("map_outline") or []
        try:
            return [(str(shape["kind"]), np.asarray(shape["points"], dtype=float).reshape(-1, 2)) for shape in shapes]
        except (KeyError, TypeError, ValueError):
            return []  # a damaged outline only costs the backdrop

    @property
    def agent(self) -> str:
        agent = self.metadata.get("agent")
        return str(cast("dict[str, Any]", agent).get("name", "?")) if isinstance(agent, dict) else str(agent or "?")

    @property
    def title(self) -> str:
        m = self.metadata
        return f"{m.get('task_id', '?')} · {m.get('granularity', '?')} · {self.agent}"

    @property
    def damaged_records(self) -> dict[int, str]:
        """Step position: why its stored record could not be read."""
        return {i: s.damaged for i, s in enumerate(self.steps()) if s.damaged}
