"""An episode file as training transitions: observations, actions, the dense reward, terminations and
truncations, cut where someone other than the policy acted. Format-free; dataset.py writes Minari.

* A segment is a run of consecutive steps chosen by the policy (source `agent`, or `privileged` for the
  scripted driver). A human step or a human-requested intervention step ends it: those actions are not
  the policy's, and an intervention step has no image.
* Observation k is the image the agent was shown at the segment's k-th step, resized. The observation
  after the last step is the next step's image where there is one, else the continuous frame taken when
  the step ended, else a copy of the last observation (the episode file holds no later picture); each
  segment says which (`final_observation`).
* With sound (`export dataset --audio`), each observation also carries the sound that led to it: the last
  `audio_frames` frames of the previous step's sound (the step whose end the image shows), right-aligned and
  zero-padded at the start when the step was shorter; `infos["audio_frames"]` says how many are real (0: none
  known: the segment's first step had no step before it, or that sound was not kept or is damaged).
* The reward is core/session/reward.py's, from the evaluator samples at the step's first and last tick,
  so an automatic push-back between steps is never credited to the agent. `intervention` marks the
  transitions after which one acted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from core.agents.actions import ActionSet
from core.episode import Episode, StepRecord, load_episode
from core.export import ExportError
from core.game.pad import Button
from core.recording.errors import EpisodeFileError
from core.recording.reader import EpisodeReader
from core.session.reward import Reading, RewardSpec, step_reward
from core.step_sources import AGENT_SOURCES

NOOP = "NoOp"  # the discrete index after the action set's: the reply named no valid action, nothing ran
CONTINUOUS_FIELDS = ("left_x", "left_y", "right_x", "right_y", "duration_s", *(f"button_{b.value}" for b in Button))


@dataclass
class Segment:
    observations: np.ndarray          # (T + 1, H, W, 3) uint8
    actions: np.ndarray               # (T,) int64, or (T, len(CONTINUOUS_FIELDS)) float32
    rewards: np.ndarray               # (T,) float64
    terminations: np.ndarray          # (T,) bool
    truncations: np.ndarray           # (T,) bool
    infos: dict[str, np.ndarray]      # each (T + 1,)
    metadata: dict[str, Any] = field(default_factory=dict[str, Any])
    audio: np.ndarray | None = None   # (T + 1, audio_frames, channels) int16, with --audio


def resize(image: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """To (width, height), the way every observation of a dataset is made (INTER_AREA)."""
    if (image.shape[1], image.shape[0]) == size:
        return np.ascontiguousarray(image)
    return cv2.resize(image, size, interpolation=cv2.INTER_AREA)


def encode_action(record: StepRecord, paradigm: str, actions: ActionSet) -> tuple[Any, bool]:
    """(action, valid). Discrete: the action set's index, or len(names) for NoOp. Continuous: a float vector."""
    decision = record.decision
    valid = decision is not None and not decision.parse_error and record.action not in ("", NOOP)
    if paradigm == "discrete":
        if not valid:
            return len(actions.names), False
        name = actions.resolve_name(record.action)
        if name is None:
            raise ExportError(f"step action {record.action!r} is not in the built-in world's action set")
        return actions.names.index(name), True
    vector = np.zeros(len(CONTINUOUS_FIELDS), np.float32)
    params: Mapping[str, Any] = decision.action_params if decision is not None else {}
    if valid and params:
        vector[0:2] = params.get("left_stick", (0.0, 0.0))
        vector[2:4] = params.get("right_stick", (0.0, 0.0))
        vector[4] = float(params.get("duration", 0.0))
        pressed: set[Any] = set(params.get("buttons") or ())
        vector[5:] = [1.0 if b.value in pressed else 0.0 for b in Button]
    return vector, valid and bool(params)


def _segments_of(sources: list[str]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    start: int | None = None
    for i, source in enumerate([*sources, "end"]):
        if source in AGENT_SOURCES and start is None:
            start = i
        elif source not in AGENT_SOURCES and start is not None:
            runs.append((start, i - 1))
            start = None
    return runs


def heard_before(episode: Episode, index: int, frames: int, channels: int) -> tuple[np.ndarray, int]:
    """The sound that led to the observation at step position `index`: the last `frames` of step index - 1's sound,
    right-aligned in a zero (frames, channels) block, and how many frames are real."""
    out = np.zeros((frames, channels), np.int16)
    clip = episode.step_audio(index - 1) if index >= 1 else None
    if clip is None or frames == 0:
        return out, 0
    tail = clip.samples[-frames:]
    out[frames - len(tail):] = tail
    return out, len(tail)


def episode_segments(path: Path, reward: RewardSpec, actions: ActionSet, size: tuple[int, int],
                     audio_frames: int | None = None) -> list[Segment]:
    """Every segment of one episode file. Raises EpisodeFileError or ExportError. The steps come from
    load_episode; images are read one at a time as each observation is made. `audio_frames`: also the sound
    before each observation, that many frames of it (the episode must have sound)."""
    episode = load_episode(path)
    layout = episode.audio_format
    if audio_frames is not None and layout is None:
        raise ExportError(f"{path} has no sound (audio: {episode.audio_state}); export without --audio, or leave "
                          "it out")
    if episode.damaged_records:  # a step whose action is unknown would enter the data as a wrong action
        first = min(episode.damaged_records)
        raise EpisodeFileError(path, f"step record at step {first + 1}", episode.damaged_records[first], first)
    result = episode.result
    metadata = episode.metadata
    options: dict[str, Any] = metadata.get("options") or {}
    paradigm = str(options.get("paradigm", "discrete"))
    records = episode.steps()
    samples = episode.sample_table
    frame_ticks = episode.frame_ticks
    steps = episode.step_numbers
    tick_before = np.fromiter((r.tick_before for r in records), np.int64, len(records))
    tick_after = np.fromiter((r.tick_after for r in records), np.int64, len(records))
    sample_ticks = samples["tick"]
    with EpisodeReader(path) as reader:

        def reading(tick: int) -> Reading:
            at = max(0, int(np.searchsorted(sample_ticks, tick, side="right")) - 1)
            return Reading(float(samples["x"][at]), float(samples["y"][at]), int(samples["flags"][at]))

        def final_observation(last: int, last_image: np.ndarray) -> tuple[np.ndarray, str]:
            following = last + 1
            if following < len(records):
                image = reader.step_image("current", following)
                if image is not None:
                    return resize(image, size), "next step image"
            end = int(tick_after[last])
            at = np.nonzero(frame_ticks == end)[0]
            if len(at):
                return resize(reader.frame(int(at[-1])), size), "continuous frame"
            return last_image, "repeated (no later picture recorded)"

        success_step = result.success_step if result is not None else None
        segments: list[Segment] = []
        for first, last in _segments_of([r.source for r in records]):
            count = last - first + 1
            observations = np.empty((count + 1, size[1], size[0], 3), np.uint8)
            acts: list[Any] = []
            rewards = np.zeros(count)
            invalid = np.zeros(count + 1, bool)
            pushed = np.zeros(count + 1, bool)
            distance = np.full(count + 1, np.nan, np.float32)
            for k, i in enumerate(range(first, last + 1)):
                observations[k] = resize(reader.image("current", i), size)
                action, valid = encode_action(records[i], paradigm, actions)
                acts.append(action)
                before, after = reading(int(tick_before[i])), reading(int(tick_after[i]))
                rewards[k] = step_reward(reward, before, after, success_step is not None and steps[i] == success_step)
                invalid[k + 1] = not valid
                pushed[k + 1] = records[i].intervention is not None
                if k == 0:
                    distance[0] = reward.goal_distance(before) if reward.goal is not None else np.nan
                distance[k + 1] = reward.goal_distance(after) if reward.goal is not None else np.nan
            observations[count], final = final_observation(last, observations[count - 1])
            sound: np.ndarray | None = None
            heard = np.zeros(0, np.int32)
            if audio_frames is not None and layout is not None:
                sound = np.zeros((count + 1, audio_frames, layout.channels), np.int16)
                heard = np.zeros(count + 1, np.int32)
                for k, i in enumerate(range(first, last + 2)):  # the last: after the segment's last step
                    sound[k], heard[k] = heard_before(episode, i, audio_frames, layout.channels)
            terminated = np.zeros(count, bool)
            terminated[-1] = success_step is not None and steps[last] == success_step
            truncated = np.zeros(count, bool)
            truncated[-1] = not terminated[-1]
            after_last = steps[last + 1] if final == "next step image" else -1
            step_of_observation = np.append(steps[first:last + 1], after_last)
            segments.append(Segment(
                observations, np.asarray(acts), rewards, terminated, truncated,
                {"step": step_of_observation.astype(np.int32), "invalid_action": invalid, "intervention": pushed,
                 "goal_distance": distance, **({"audio_frames": heard} if sound is not None else {})},
                {"source_file": str(path), "first_step": int(steps[first]), "last_step": int(steps[last]),
                 "start_reading": "recorded" if len(sample_ticks) and sample_ticks[0] <= tick_before[first]
                 else "missing: the first step's progress is measured from its first sample",
                 "final_observation": final, "paradigm": paradigm,
                 "ended_by": "success" if terminated[-1] else ("a person or intervention" if last + 1 < len(records)
                                                               else result.end_reason if result is not None
                                                               else "cut short")}, sound))
    return segments
