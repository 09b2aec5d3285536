"""`python main.py bench hearing`: what giving an agent the sound costs per step (`run --audio ...`).

On real steps of the built-in world (walking, 15 ticks = 0.5 s of sound each), against the frame's own PNG
encoding in the same run (what every observation already costs):
* spectrogram_ms_per_step: drawing the stereo log-mel picture (`--audio spectrogram`), goal <= 10 ms;
* spectrogram_png_ms_per_step: encoding it as the PNG the model is sent;
* wav_ms_per_step: encoding the step's sound as the WAV an audio model is sent (`--audio clip`);
* spectrogram_bytes_per_step / wav_bytes_per_step: what goes out, against the frame PNG's bytes.
"""

from __future__ import annotations

import argparse
import base64
import time
from collections.abc import Callable

import numpy as np

from core.agents.hearing import clip_wav, spectrogram_picture
from core.agents.observe import encode_image
from core.audio.clip import AudioClip
from core.game.builtin import BuiltinWorld
from core.game.pad import PadState

TICKS = 15


def _steps(count: int) -> list[tuple[AudioClip, np.ndarray]]:
    """(sound, frame) of `count` real steps: walking, turning now and then, so it bumps and steps."""
    steps: list[tuple[AudioClip, np.ndarray]] = []
    with BuiltinWorld.launch(renderer="software") as world:
        result = world.reset("south_gate")
        for index in range(count):
            pad = PadState(left_y=1.0) if index % 5 else PadState(right_x=1.0)
            before = result.tick
            result = world.hold(pad, TICKS / world.info.tick_hz)
            steps.append((world.audio_ticks(before + 1, result.tick), world.latest_frame().pixels.copy()))
    return steps


def _timed(work: Callable[[], object], rounds: int) -> float:
    started = time.perf_counter()
    for _ in range(rounds):
        work()
    return (time.perf_counter() - started) / rounds


def bench_hearing(args: argparse.Namespace, emit: Callable[..., None]) -> None:
    steps = _steps(max(10, args.steps // 3))
    for sound, _ in steps[:2]:
        spectrogram_picture(sound)  # the filter bank is made once per rate
    picture_s, png_s, wav_s, frame_s = 0.0, 0.0, 0.0, 0.0
    picture_bytes, wav_size, frame_bytes = 0, 0, 0
    rounds = 5
    for sound, frame in steps:
        picture = spectrogram_picture(sound)
        picture_s += _timed(lambda s=sound: spectrogram_picture(s), rounds)
        png_s += _timed(lambda p=picture: encode_image(p), rounds)
        wav_s += _timed(lambda s=sound: base64.b64encode(clip_wav(s)), rounds)
        frame_s += _timed(lambda f=frame: encode_image(f), rounds)
        picture_bytes += len(encode_image(picture))
        wav_size += len(base64.b64encode(clip_wav(sound)))
        frame_bytes += len(encode_image(frame))
    count = len(steps)
    frame_ms = frame_s / count * 1000
    emit(args, "spectrogram_ms_per_step", picture_s / count * 1000, "ms", frame_ms, "frame_png_ms")
    emit(args, "spectrogram_png_ms_per_step", png_s / count * 1000, "ms", frame_ms, "frame_png_ms")
    emit(args, "wav_ms_per_step", wav_s / count * 1000, "ms", frame_ms, "frame_png_ms")
    emit(args, "spectrogram_bytes_per_step", picture_bytes / count, "bytes (base64)", frame_bytes / count,
         "frame_png_bytes")
    emit(args, "wav_bytes_per_step", wav_size / count, "bytes (base64)", frame_bytes / count, "frame_png_bytes")
