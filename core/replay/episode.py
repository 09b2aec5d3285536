"""ReplayEpisode: everything the replay view needs about an episode except the images, loaded once.

Per-step facts are arrays indexed by step position (0 .. step_count-1); step numbers are the
recorded 1-based `step` column. Images and continuous frames are read on demand by a loader that
owns its own file handle (see studio/replay/frame_loader.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from core.recording.errors import EpisodeFileError
from core.recording.reader import EpisodeReader
from core.session.metrics import IM_EPSILON_M, consecutive_im_series, facts_from_record

MARK_KINDS = ("success", "intervention", "human", "parse_error")


@dataclass
class ReplayEpisode:
    path: Path
    metadata: dict[str, Any]
    result: dict[str, Any] | None      # None: cut short (crash or kill); still replayable
    steps: np.ndarray                  # 1-based step numbers
    tick_before: np.ndarray
    tick_after: np.ndarray
    ineffective: np.ndarray            # bool per step
    latency_s: np.ndarray
    records: list[dict[str, Any]]
    positions: np.ndarray              # (n, 2) where each step ended, from the evaluator's samples
    path_xy: np.ndarray                # (m, 2) every sample
    frame_ticks: np.ndarray            # ticks of continuous frames (may be empty)
    image_sets: list[str]
    damaged_records: dict[int, str] = field(default_factory=dict)  # step index: what is damaged
    displacement: np.ndarray = field(default_factory=lambda: np.zeros(0))  # metres per step (own input)
    cumulative_ims: np.ndarray = field(init=False)
    cumulative_moves: np.ndarray = field(init=False)
    cumulative_tokens: np.ndarray = field(init=False)
    cumulative_cost: np.ndarray = field(init=False)
    consecutive_ims: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        if len(self.displacement) != len(self.steps):  # built by hand without it: what `ineffective` implies
            self.displacement = np.where(self.ineffective, 0.0, IM_EPSILON_M)
        facts = [facts_from_record(record, {"step": int(step), "displacement": float(moved)})
                 for record, step, moved in zip(self.records, self.steps, self.displacement, strict=True)]
        self.cumulative_ims = np.cumsum([f.ineffective for f in facts], dtype=np.int64)
        self.cumulative_moves = np.cumsum([f.by_agent and f.movement for f in facts], dtype=np.int64)
        usage = [r.get("usage") or {} for r in self.records]
        self.cumulative_tokens = np.cumsum([int(u.get("input_tokens", 0)) + int(u.get("output_tokens", 0))
                                            for u in usage], dtype=np.int64)
        self.cumulative_cost = np.cumsum([float(u.get("cost_usd", 0.0)) for u in usage])
        self.consecutive_ims = np.asarray(consecutive_im_series(facts), dtype=np.int64)

    def map_outline(self) -> list[tuple[str, np.ndarray]]:
        """The world's footprints recorded with the episode (empty for games that give none)."""
        shapes = self.metadata.get("map_outline") or []
        try:
            return [(str(shape["kind"]), np.asarray(shape["points"], dtype=float).reshape(-1, 2)) for shape in shapes]
        except (KeyError, TypeError, ValueError):
            return []  # a damaged outline only costs the backdrop

    @property
    def step_count(self) -> int:
        return len(self.steps)

    @property
    def title(self) -> str:
        m = self.metadata
        return f"{m.get('task_id', '?')} · {m.get('granularity', '?')} · {self.agent}"

    @property
    def agent(self) -> str:
        agent = self.metadata.get("agent")
        return str(agent.get("name", "?")) if isinstance(agent, dict) else str(agent or "?")

    @property
    def success_step(self) -> int | None:
        step = (self.result or {}).get("success_step")
        return int(step) if step is not None else None

    def marks(self) -> dict[str, list[int]]:
        """Step numbers to mark on the timeline, by kind."""
        marks: dict[str, list[int]] = {kind: [] for kind in MARK_KINDS}
        for step, record in zip(self.steps.tolist(), self.records, strict=True):
            if record.get("intervention"):
                marks["intervention"].append(step)
            if record.get("source") == "human":
                marks["human"].append(step)
            if record.get("parse_error"):
                marks["parse_error"].append(step)
        if self.success_step is not None:
            marks["success"].append(self.success_step)
        return marks

    def index_of(self, step: int) -> int:
        """Position of a step number (clamped to the episode)."""
        return int(np.clip(np.searchsorted(self.steps, step), 0, max(0, self.step_count - 1)))

    def frames_between(self, index: int) -> np.ndarray:
        """Indices of the continuous frames recorded while step `index` was executing."""
        if len(self.frame_ticks) == 0:
            return np.zeros(0, np.int64)
        low, high = self.tick_before[index], self.tick_after[index]
        return np.nonzero((self.frame_ticks > low) & (self.frame_ticks <= high))[0]

    def metrics_at(self, index: int) -> dict[str, Any]:
        movement = int(self.cumulative_moves[index])
        ims = int(self.cumulative_ims[index])
        success = self.success_step is not None and self.steps[index] >= self.success_step
        return {"step": int(self.steps[index]), "ineffective_moves": ims, "tokens": int(self.cumulative_tokens[index]),
                "cost_usd": float(self.cumulative_cost[index]),
                "mean_latency_s": float(np.mean(self.latency_s[:index + 1])),
                "im_rate": ims / movement if movement else 0.0, "consecutive": int(self.consecutive_ims[index]),
                "success": success}


def _records(episode: EpisodeReader, count: int) -> tuple[list[dict[str, Any]], dict[int, str]]:
    """Every step's record; a damaged one becomes a placeholder that says so, so it costs only its step."""
    records, damaged = [], {}
    for index in range(count):
        try:
            records.append(episode.record(index))
        except EpisodeFileError as exc:
            damaged[index] = f"damaged record at step {index + 1}: {exc.problem}"
            records.append({"source": "?", "thought": f"({damaged[index]})", "damaged": True})
    return records, damaged


def load_replay(path: Path) -> ReplayEpisode:
    """Reads an episode read-only. Raises EpisodeFileError, naming the file and the damaged part, when the
    episode as a whole cannot be shown; a damaged step record only marks that step (`damaged_records`)."""
    path = Path(path)
    with EpisodeReader(path) as episode:
        count = episode.step_count
        numbers = episode.step_numbers()
        records, damaged = _records(episode, count)
        samples = episode.samples()
        frame_ticks = episode.frame_ticks()
        image_sets = episode.image_sets()
        metadata, result = episode.metadata, episode.result
    if count == 0:
        raise EpisodeFileError(path, "/steps", "holds no complete step; there is nothing to replay")
    xy = np.column_stack([samples["x"], samples["y"]]).astype(float)
    ticks = samples["tick"]
    tick_after = numbers["tick_after"].astype(np.int64)
    if len(ticks):
        at = np.clip(np.searchsorted(ticks, tick_after, side="right") - 1, 0, len(ticks) - 1)
        positions = xy[at]
    else:
        positions = np.zeros((count, 2))
    return ReplayEpisode(path, metadata, result, numbers["step"].astype(np.int64),
                         numbers["tick_before"].astype(np.int64), tick_after,
                         numbers["ineffective"].astype(bool), numbers["latency_s"].astype(float), records, positions,
                         xy, frame_ticks, image_sets, damaged, numbers["displacement"].astype(float))
