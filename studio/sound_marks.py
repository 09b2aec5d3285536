"""What the step timeline and the sound pane show of an episode's recorded sound: the steps whose sound holds a
loud onset (a bump: core/audio/onsets.detect_bumps), and the spectrogram columns of the stretch up to a step.

A bump is looked for in the step's own sound with the end of the step before it in front, so an onset right
at the step's start is judged against what came before it (a rise needs something to rise from), and counted
for the step only if it begins inside the step. Qt-free: Replay runs it on its opening thread, Live on each
step's sound as it is recorded.
"""

from __future__ import annotations

import numpy as np

from core.audio.clip import AudioClip
from core.audio.columns import ColumnMaker
from core.audio.onsets import detect_bumps
from core.episode import Episode
from core.export.clip_plan import tick_rate

CONTEXT_S = 0.3  # of the previous step's sound put in front of a step's


def step_has_bump(clip: AudioClip, before: AudioClip | None) -> bool:
    tail = before.samples[-int(CONTEXT_S * before.rate):] if before is not None and before.rate == clip.rate \
        else np.zeros((0, clip.samples.shape[1]), np.int16)
    pcm = np.concatenate([tail, clip.samples]) if len(tail) else clip.samples
    return any(onset.sample >= len(tail) for onset in detect_bumps(pcm, clip.rate))


def bump_positions(episode: Episode) -> list[int]:
    """The positions of the steps whose recorded sound holds a bump (none for an episode without sound)."""
    found: list[int] = []
    before: AudioClip | None = None
    for index in range(len(episode)):
        clip = episode.step_audio(index)
        if clip is not None and len(clip.samples) and step_has_bump(clip, before):
            found.append(index)
        before = clip
    return found


class StepColumns:
    """Spectrogram columns per step of one episode, made when first asked for and kept (Replay's sound pane)."""

    def __init__(self, episode: Episode, rows: int = 80) -> None:
        self.episode = episode
        layout = episode.audio_format
        self.maker = ColumnMaker(layout.rate, layout.channels, rows) if layout is not None else None
        self._cache: dict[int, np.ndarray] = {}

    def step(self, index: int) -> np.ndarray | None:
        """(channels, rows, columns) uint8 of the step's sound; None where it has none (or it is damaged)."""
        if self.maker is None:
            return None
        if index not in self._cache:
            clip = self.episode.step_audio(index)
            if clip is None:
                return None
            self._cache[index] = self.maker.whole(clip.samples)
        return self._cache[index]

    def up_to(self, index: int, columns: int) -> np.ndarray | None:
        """The last `columns` columns of the sound up to the end of the step at `index` (steps without sound:
        black), or None when the episode has no sound."""
        if self.maker is None:
            return None
        parts: list[np.ndarray] = []
        count = 0
        position = index
        while position >= 0 and count < columns:
            part = self.step(position)
            if part is None:  # a gap the length of the step, so time stays true
                record = self.episode.step(position)
                hz, _assumed = tick_rate(dict(self.episode.metadata))
                width = max(1, round((record.tick_after - record.tick_before) / hz * self.maker.columns_per_second))
                part = np.zeros((self.maker.channels, self.maker.rows, width), np.uint8)
            parts.append(part)
            count += part.shape[2]
            position -= 1
        if not parts:
            return np.zeros((self.maker.channels, self.maker.rows, 0), np.uint8)
        return np.concatenate(parts[::-1], axis=2)[:, :, -columns:]


def playable_stretch(episode: Episode, first: int, last: int) -> tuple[int, np.ndarray] | None:
    """(rate, PCM) of steps first..last as playback shows them: each step's sound cut (or padded with silence) to
    the step's own ticks, a step without sound (or with damaged sound) silent for as long, so that the sound
    keeps time with the pictures. None when the episode has no sound."""
    layout = episode.audio_format
    if layout is None:
        return None
    hz, _assumed = tick_rate(dict(episode.metadata))
    parts: list[np.ndarray] = []
    for index in range(first, last + 1):
        record = episode.step(index)
        frames = max(0, round((record.tick_after - record.tick_before) * layout.rate / hz))
        clip = episode.step_audio(index)
        part = np.zeros((frames, layout.channels), np.int16)
        if clip is not None:
            usable = clip.samples[:frames]
            part[:len(usable)] = usable
        parts.append(part)
    return layout.rate, np.concatenate(parts) if parts else np.zeros((0, layout.channels), np.int16)
