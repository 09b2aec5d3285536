"""load_episode: an episode file (any version, complete or cut short) as an Episode.

The same type the runner fills, with its metrics from the same code (core/episode/metrics.py). Steps
whose stored record is damaged are kept with `damaged` saying why, so they cost only themselves.
Positions before and after each step come from the record (files since the episode model) or, for
older files, from the evaluator samples at the step's ticks.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core.audio.clip import AudioClip, AudioLayout
from core.episode.model import Episode
from core.episode.records import EpisodeResult, Position, StepRecord
from core.recording.errors import EpisodeFileError
from core.recording.reader import EpisodeReader


@dataclass(frozen=True)
class EpisodeHeader:
    """What a folder scan needs of an episode without reading its steps: the metadata, how it ended
    (None: cut short) and how many complete steps it holds."""

    path: Path
    metadata: dict[str, Any]
    result: EpisodeResult | None
    step_count: int


def read_header(path: Path) -> EpisodeHeader:
    """The header of an episode file, in O(1) of its length (labels, folder lists). Raises EpisodeFileError."""
    with EpisodeReader(Path(path)) as reader:
        result = reader.result
        return EpisodeHeader(Path(path), reader.metadata, EpisodeResult.from_json(result) if result is not None
                             else None, reader.step_count)


def _position_at(ticks: np.ndarray, xy: np.ndarray, tick: int) -> Position | None:
    """Where the last sample read at or before `tick` put the character (the first sample if none was)."""
    if len(ticks) == 0:
        return None
    at = int(np.clip(np.searchsorted(ticks, tick, side="right") - 1, 0, len(ticks) - 1))
    return float(xy[at, 0]), float(xy[at, 1])


def _dialogue_at(ticks: np.ndarray, dialogue: np.ndarray, tick: int) -> bool:
    """Whether the last sample read at or before `tick` had a dialogue open (files before metrics v3)."""
    if len(ticks) == 0:
        return False
    at = int(np.clip(np.searchsorted(ticks, tick, side="right") - 1, 0, len(ticks) - 1))
    return bool(dialogue[at])


def load_episode(path: Path) -> Episode:
    """Read an episode read-only. Raises EpisodeFileError, naming the file and the damaged part, when the
    episode as a whole cannot be read; a damaged step record only marks that step."""
    path = Path(path)
    with EpisodeReader(path) as reader:
        count = reader.step_count
        numbers = reader.step_numbers()
        table = reader.sample_table()
        frame_ticks = reader.frame_ticks()
        episode = Episode(reader.metadata, path, reader.image_sets())
        result = reader.result
        records: list[tuple[dict[str, Any], str]] = []
        for index in range(count):
            try:
                records.append((reader.record(index), ""))
            except EpisodeFileError as exc:
                records.append(({}, f"damaged record at step {index + 1}: {exc.problem}"))
        sound = _read_audio(reader, count)
    ticks = np.asarray(table["tick"], dtype=np.int64)
    xy = np.column_stack([table["x"], table["y"]]).astype(float) if len(ticks) else np.zeros((0, 2))
    dialogue = np.asarray(table["dialogue_active"], dtype=bool)
    if result is not None:
        parsed = EpisodeResult.from_json(result)
        episode.reached_goal_area = bool(parsed.reached_goal_area)
        episode.set_success_step(parsed.success_step)
    for index in range(count):
        row = {name: column[index].item() for name, column in numbers.items()}
        record, damaged = records[index]
        if damaged:
            record = {"source": record.get("source")}
        row["source"] = record.get("source") or _source_name(int(row["source"]))
        step = StepRecord.from_stored(row, record, damaged,
                                      position_before=_position_at(ticks, xy, int(row["tick_before"])),
                                      position_after=_position_at(ticks, xy, int(row["tick_after"])),
                                      dialogue_open=_dialogue_at(ticks, dialogue, int(row["tick_before"])))
        episode.append_step(step)
    _add_audio(episode, *sound)
    episode.append_sample_table(table)
    episode.append_frame_ticks(frame_ticks)  # ticks only: frames are read on demand (studio/replay/frame_loader.py)
    if result is not None:
        episode.set_result(EpisodeResult.from_json(result))
    return episode


_Sound = tuple[AudioLayout | None, dict[int, tuple[AudioClip, int, int]], dict[int, str]]


def _read_audio(reader: EpisodeReader, count: int) -> _Sound:
    """Every step's sound, read eagerly (a 300-step episode at 24 kHz stereo is about 15 MB of PCM): the layout
    (None: the file has none), the clips with their ticks, and the steps whose sound is damaged. A damaged /audio
    header costs the sound, never the episode."""
    try:
        layout = reader.audio_layout()
        index = reader.audio_index() if layout is not None else None
    except EpisodeFileError as exc:
        return None, {}, {i: f"damaged audio at step {i + 1}: {exc.problem}" for i in range(count)}
    if layout is None or index is None:
        return None, {}, {}
    clips: dict[int, tuple[AudioClip, int, int]] = {}
    problems: dict[int, str] = {}
    for position in range(min(count, len(index))):
        try:
            samples = reader.step_audio(position)
        except EpisodeFileError as exc:
            problems[position] = exc.problem
            continue
        if samples is not None:
            clips[position] = (AudioClip(layout.rate, samples), int(index[position, 2]), int(index[position, 3]))
    return layout, clips, problems


def _add_audio(episode: Episode, layout: AudioLayout | None, clips: dict[int, tuple[AudioClip, int, int]],
               problems: dict[int, str]) -> None:
    episode.audio_format = layout
    for position, (clip, first_tick, last_tick) in clips.items():
        episode.append_audio(position, clip, first_tick, last_tick)
    for position, problem in problems.items():
        episode.set_audio_problem(position, problem)


def _source_name(index: int) -> str:
    from core.recording.writer import SOURCES

    return SOURCES[index] if 0 <= index < len(SOURCES) else "agent"
