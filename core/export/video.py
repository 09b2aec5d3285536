"""Clip writers: H.264 MP4 through PyAV, animated GIF through Pillow.

Why these two (measured on this project's machines, see docs/export.md): OpenCV's wheel has no
software H.264 encoder (only a V4L2 hardware one), its `mp4v` (MPEG-4 Part 2) output does not play
in browsers, and its VP8/VP9 WebM writers encode a 960x540 clip at about 4 and 1 frames/s. PyAV's
wheels bundle FFmpeg with libx264, which gives the MP4 that browsers, slide software and standard
players all open, at tens of frames/s. PyAV is the optional `export` extra; GIF needs only Pillow.

Each writer takes (picture, seconds on screen). MP4 is written at a constant frame rate (pictures
repeat; x264 stores a repeat in a few bytes), so clocks stay exact however irregular the ticks were.
An MP4 may carry sound: AAC (FFmpeg's native encoder, in every PyAV wheel) at 48 kHz, fed the recording's
int16 PCM as it comes (PyAV converts the rate and sample format); `write_audio` follows each picture with
its sound (core/export/clip_audio.py). A GIF has no sound.
"""

from __future__ import annotations

import importlib.util
from fractions import Fraction
from pathlib import Path
from typing import Protocol

import numpy as np
from PIL import Image

from core.audio.clip import AudioLayout
from core.export import ExportError

CLIP_SUFFIXES = (".mp4", ".gif")
GIF_MIN_FRAME_MS = 20  # browsers show shorter GIF delays as 100 ms


AAC_RATE = 48000  # AAC's usual rate: its 1024-sample frames are 21 ms, under one video frame at 30 fps
AAC_BIT_RATE = 128_000


class ClipWriter(Protocol):
    def write(self, picture: np.ndarray, seconds: float) -> None: ...
    def write_audio(self, samples: np.ndarray) -> None: ...
    def close(self) -> None: ...
    def abort(self) -> None: ...


def mp4_available() -> bool:
    return importlib.util.find_spec("av") is not None


MP4_NEEDS_PYAV = ("writing an MP4 (H.264, which browsers play) needs PyAV: pip install -e \".[export]\" "
                  "(or pip install av); or write a .gif instead")


class Mp4Writer:
    def __init__(self, path: Path, size: tuple[int, int], fps: float, crf: int = 20,
                 audio: AudioLayout | None = None) -> None:
        if not mp4_available():
            raise ExportError(MP4_NEEDS_PYAV)
        import av

        self.fps = fps
        self._container = av.open(str(path), "w", format="mp4", options={"movflags": "+faststart"})
        rate = Fraction(fps).limit_denominator(1001)
        self._stream = self._container.add_stream("libx264", rate=rate)  # pyright: ignore[reportUnknownMemberType]  # PyAV: **kwargs unannotated
        self._stream.width, self._stream.height = size
        self._stream.pix_fmt = "yuv420p"  # what browsers decode; also why the size must be even
        self._stream.options = {"crf": str(crf), "preset": "veryfast"}
        self._seconds = 0.0
        self.frames = 0
        self._frame_type = av.VideoFrame
        self._audio_type = av.AudioFrame
        self._audio = audio
        self.audio_frames = 0  # at the recording's rate
        if audio is not None:
            if audio.channels not in (1, 2):
                raise ExportError(f"the recording's sound has {audio.channels} channels; a clip carries mono or "
                                  "stereo: export it with --no-audio")
            self._sound = self._container.add_stream("aac", rate=AAC_RATE)  # pyright: ignore[reportUnknownMemberType]  # PyAV: **kwargs unannotated
            self._sound.layout = "stereo" if audio.channels == 2 else "mono"
            self._sound.bit_rate = AAC_BIT_RATE

    def write(self, picture: np.ndarray, seconds: float) -> None:
        self._seconds += seconds
        due = round(self._seconds * self.fps)
        if due <= self.frames:
            return  # on screen for less than one output frame: the clock moves on without it
        frame = self._frame_type.from_ndarray(np.ascontiguousarray(picture), format="rgb24")
        while self.frames < due:
            frame.pts = self.frames
            for packet in self._stream.encode(frame):  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]  # PyAV: Packet's type argument is unknown
                self._container.mux(packet)  # pyright: ignore[reportUnknownMemberType]  # PyAV: Packet's type argument is unknown
            self.frames += 1

    def write_audio(self, samples: np.ndarray) -> None:
        """Append int16 (frames, channels) PCM at the recording's rate (ignored by a writer made without sound)."""
        if self._audio is None or len(samples) == 0:
            return
        layout = "stereo" if self._audio.channels == 2 else "mono"
        frame = self._audio_type.from_ndarray(np.ascontiguousarray(samples, np.int16).reshape(1, -1), format="s16",
                                              layout=layout)
        frame.sample_rate = self._audio.rate
        frame.time_base = Fraction(1, self._audio.rate)
        frame.pts = self.audio_frames
        self.audio_frames += len(samples)
        for packet in self._sound.encode(frame):  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]  # PyAV: Packet's type argument is unknown
            self._container.mux(packet)  # pyright: ignore[reportUnknownMemberType]  # PyAV: Packet's type argument is unknown

    def close(self) -> None:
        for packet in self._stream.encode():  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]  # PyAV: Packet's type argument is unknown
            self._container.mux(packet)  # pyright: ignore[reportUnknownMemberType]  # PyAV: Packet's type argument is unknown
        if self._audio is not None:
            for packet in self._sound.encode():  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]  # PyAV: Packet's type argument is unknown
                self._container.mux(packet)  # pyright: ignore[reportUnknownMemberType]  # PyAV: Packet's type argument is unknown
        self._container.close()

    def abort(self) -> None:
        self._container.close()


class GifWriter:
    """Pillow keeps the frames until the end (GIF needs them for its palette and deltas), so each is
    reduced to a palette as it comes: about width x height bytes a frame."""

    def __init__(self, path: Path, size: tuple[int, int]) -> None:
        self.path, self.size = path, size
        self._frames: list[Image.Image] = []
        self._starts: list[int] = []  # ms
        self._seconds = 0.0
        self._clock_ms = 0

    def write(self, picture: np.ndarray, seconds: float) -> None:
        start = self._clock_ms
        self._seconds += seconds
        self._clock_ms = round(self._seconds * 100) * 10  # GIF delays are in hundredths of a second
        image = Image.fromarray(np.ascontiguousarray(picture)).quantize(colors=255, method=Image.Quantize.MEDIANCUT,
                                                                         dither=Image.Dither.NONE)
        if self._frames and start - self._starts[-1] < GIF_MIN_FRAME_MS:
            self._frames[-1] = image  # the previous picture was too brief to show: this one takes its slot
        else:
            self._frames.append(image)
            self._starts.append(start)

    def write_audio(self, samples: np.ndarray) -> None:
        """A GIF has no sound."""

    @property
    def frames(self) -> int:
        return len(self._frames)

    def close(self) -> None:
        if not self._frames:
            raise ExportError("the clip has no picture to write; choose more steps")
        ends = [*self._starts[1:], max(self._clock_ms, self._starts[-1] + GIF_MIN_FRAME_MS)]
        durations = [end - start for start, end in zip(self._starts, ends)]
        self._frames[0].save(self.path, format="GIF", save_all=True, append_images=self._frames[1:],
                             duration=durations, loop=0, optimize=False, disposal=1)
        self._frames.clear()

    def abort(self) -> None:
        self._frames.clear()


def open_writer(path: Path, size: tuple[int, int], fps: float, audio: AudioLayout | None = None) -> ClipWriter:
    """`audio`: the sound's layout, for an MP4 that carries it (a GIF never does)."""
    suffix = path.suffix.lower()
    if suffix == ".mp4":
        return Mp4Writer(path, size, fps, audio=audio)
    if suffix == ".gif":
        return GifWriter(path, size)
    raise ExportError(f"cannot write {path.name}: a clip is .mp4 (H.264) or .gif")
