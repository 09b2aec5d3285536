"""16-bit PCM WAV files, in and out, with the standard library's `wave`."""

from __future__ import annotations

import io
import wave
from pathlib import Path

import numpy as np


def wav_bytes(rate: int, pcm: np.ndarray) -> bytes:
    """A complete WAV file of int16 PCM shaped (frames, channels) or (frames,)."""
    samples = np.asarray(pcm)
    if samples.dtype != np.int16:
        raise ValueError(f"WAV needs int16 samples, got {samples.dtype}")
    if samples.ndim == 1:
        samples = samples[:, None]
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(samples.shape[1])
        out.setsampwidth(2)
        out.setframerate(int(rate))
        out.writeframes(np.ascontiguousarray(samples.astype("<i2")).tobytes())
    return buffer.getvalue()


def write_wav(path: Path, rate: int, pcm: np.ndarray) -> None:
    Path(path).write_bytes(wav_bytes(rate, pcm))


def read_wav(path: Path) -> tuple[int, np.ndarray]:
    """(rate, int16 PCM shaped (frames, channels)) of a 16-bit PCM WAV file."""
    with wave.open(str(path), "rb") as source:
        if source.getsampwidth() != 2:
            raise ValueError(f"{path} is not 16-bit PCM ({8 * source.getsampwidth()}-bit samples)")
        channels, rate = source.getnchannels(), source.getframerate()
        frames = source.readframes(source.getnframes())
    return rate, np.frombuffer(frames, "<i2").astype(np.int16).reshape(-1, channels)
