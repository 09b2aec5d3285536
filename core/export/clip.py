"""`export_clip`: the pictures of a step range, with overlays, as an MP4 or a GIF.

One function behind `python main.py export clip` and the Replay view's Export clip…: it reports
progress per picture, stops between pictures when cancelled, and writes to a temporary file that
replaces the output only once complete, so a cancelled or failed export leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import os
import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core.audio.clip import AudioLayout
from core.export import ExportCancelled, ExportError
from core.export.clip_audio import Soundtrack, StepSound, TickSound
from core.export.clip_data import ClipEpisode, load_clip_episode
from core.export.clip_plan import ClipPlan, parse_step_range, plan_clip, step_positions, tick_rate
from core.export.overlay import OverlayOptions, OverlayRenderer
from core.export.video import CLIP_SUFFIXES, open_writer
from core.recording.reader import EpisodeFileError, EpisodeReader

Progress = Callable[[int, int], None]  # (pictures done, pictures in all)


@dataclass(frozen=True)
class ClipOptions:
    overlays: OverlayOptions = field(default_factory=OverlayOptions)
    fps: float = 30.0                # MP4 frame rate (pictures repeat to keep the game's timing)
    step_seconds: float = 0.5        # per step, when there are no continuous frames (or use_frames is off)
    speed: float = 1.0               # > 1 plays faster than the game ran
    use_frames: bool = True          # use continuous frames where they were recorded
    tick_hz: float | None = None     # override the recorded tick rate
    annotator: str | None = None     # show only this annotator's labels (default: every annotator's)
    audio: bool = True               # an MP4 carries the recording's sound (AAC) where it has some; a GIF never


@dataclass(frozen=True)
class ClipResult:
    path: Path
    first_step: int
    last_step: int
    pictures: int          # distinct pictures drawn
    seconds: float         # the clip's length
    size: tuple[int, int]  # width, height
    continuous: bool       # continuous frames were used
    notes: tuple[str, ...] = ()
    audio: bool = False    # the clip carries the recording's sound


def check_output(out: Path) -> None:
    if out.suffix.lower() not in CLIP_SUFFIXES:
        raise ExportError(f"cannot write {out}: a clip's file name ends in .mp4 (H.264 video) or .gif")
    if out.is_dir():
        raise ExportError(f"{out} is a folder; give a file name ending in .mp4 or .gif")


def export_clip(episode: Path | ClipEpisode, steps: str | tuple[int, int], out: Path,
                options: ClipOptions | None = None, progress: Progress | None = None,
                cancel: threading.Event | None = None) -> ClipResult:
    """Raises ExportError (with what to do) or ExportCancelled. `steps` are step numbers, inclusive."""
    options = options or ClipOptions()
    out = Path(out)
    check_output(out)
    if options.fps <= 0 or options.fps > 120:
        raise ExportError(f"--fps must be in (0, 120], got {options.fps:g}")
    data = episode if isinstance(episode, ClipEpisode) else load_clip_episode(Path(episode), options.annotator)
    first, last = parse_step_range(steps, data.steps) if isinstance(steps, str) else \
        step_positions(int(steps[0]), int(steps[1]), data.steps)
    tick_hz, note = tick_rate(data.metadata, options.tick_hz)
    plan = plan_clip(data.tick_before, data.tick_after, data.frame_ticks, first, last, tick_hz,
                     options.step_seconds, options.use_frames, options.speed)
    notes = tuple(n for n in (note if plan.continuous else None, data.label_warning) if n)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ExportError(f"cannot create the folder {out.parent}: {exc}") from None
    partial = out.with_name(f".{out.stem}.partial{out.suffix}")
    sound_notes: list[str] = []
    try:
        with EpisodeReader(data.path) as reader:
            soundtrack = _soundtrack(reader, data, plan, options, sound_notes) \
                if options.audio and out.suffix.lower() == ".mp4" else None
            size = _write(reader, data, plan, partial, options, progress, cancel, soundtrack)
        os.replace(partial, out)
    except EpisodeFileError as exc:
        raise ExportError(str(exc)) from None
    except (KeyError, ValueError, RuntimeError, zlib.error) as exc:  # damage inside, found while reading images
        raise ExportError(f"{data.path} could not be read while writing the clip ({type(exc).__name__}: {exc}); "
                          "it was left unchanged") from None
    except OSError as exc:
        raise ExportError(f"cannot write {out}: {exc}") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()
    return ClipResult(out, int(data.steps[first]), int(data.steps[last]), len(plan.shots), plan.seconds, size,
                      plan.continuous, (*notes, *sound_notes), soundtrack is not None)


def _soundtrack(reader: EpisodeReader, data: ClipEpisode, plan: ClipPlan, options: ClipOptions,
                notes: list[str]) -> Soundtrack | None:
    """The clip's sound (core/export/clip_audio.py), or None (with a note) when the recording has none."""
    try:
        layout: AudioLayout | None = reader.audio_layout()
        index = reader.audio_index() if layout is not None else None
    except EpisodeFileError as exc:
        notes.append(f"the recording's sound cannot be read ({exc.problem}); the clip is silent")
        return None
    if layout is None or index is None:
        state = data.metadata.get("audio")
        why = {"off": "its game's sound was turned off", "unavailable": "its game offers no sound"}.get(
            str(state), "it was recorded without sound")
        notes.append(f"the recording has no sound ({why}); the clip is silent")
        return None
    steps: list[StepSound] = []
    for position in range(plan.first, min(plan.last + 1, len(index))):
        try:
            samples = reader.step_audio(position)
        except EpisodeFileError as exc:
            notes.append(f"{exc.problem.split(':')[0]}: that step is silent in the clip")
            continue
        if samples is not None:
            steps.append(StepSound(samples, int(index[position, 2]), int(index[position, 3])))
    return Soundtrack(plan, TickSound(steps, layout.channels), layout.rate, options.speed)


def _write(reader: EpisodeReader, data: ClipEpisode, plan: ClipPlan, path: Path, options: ClipOptions,
           progress: Progress | None, cancel: threading.Event | None, soundtrack: Soundtrack | None) -> tuple[int, int]:
    first_picture = reader.image("current", plan.first)
    renderer = OverlayRenderer(data, plan.first, plan.last, options.overlays, first_picture.shape)
    layout = AudioLayout(soundtrack.rate, soundtrack.sound.channels) if soundtrack is not None else None
    writer = open_writer(path, renderer.size, options.fps, layout)
    shown: np.ndarray | None = None
    total = len(plan.shots)
    try:
        for done, shot in enumerate(plan.shots):
            if cancel is not None and cancel.is_set():
                raise ExportCancelled(f"the clip was cancelled after {done} of {total} pictures; nothing was written")
            picture = reader.step_image("current", shot.index) if shot.kind == "step" else reader.frame(shot.index)
            if picture is None:  # no image at this step (an intervention step): keep the last picture
                picture = shown if shown is not None else np.full_like(first_picture, 40)
            shown = picture
            writer.write(renderer.render(picture, shot.step, shot.tick), shot.seconds)
            if soundtrack is not None:
                writer.write_audio(soundtrack.next(shot))
            if progress is not None:
                progress(done + 1, total)
        writer.close()
    except BaseException:
        writer.abort()
        raise
    return renderer.size
