"""`python main.py bench record`: episode recording speed, size and seek latency, against plain writes, and
what the sound (/audio) adds to a recording: its compressed bytes per step, audio on against off in one run."""

from __future__ import annotations

import argparse
import random
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from core.recording import writer as writer_module
from core.recording.reader import EpisodeReader
from core.recording.writer import AUDIO_ROW_FRAMES, EpisodeWriter, audio_chunk_bytes

Emit = Callable[..., None]


def _frames(width: int, height: int, count: int = 24) -> list[np.ndarray]:
    """Real frames from the built-in world, so compression sees what recordings really hold."""
    from core.game.builtin import BuiltinWorld
    from core.game.pad import PadState

    frames: list[np.ndarray] = []
    with BuiltinWorld.launch(width=width, height=height, renderer="software") as world:
        world.reset("south_gate")
        for i in range(count):
            world.hold(PadState(left_y=1.0, right_x=0.4 if i % 2 else -0.4), 0.5)
            frames.append(world.latest_frame().pixels)
    return frames


def _record(path: Path, frames: list[np.ndarray], steps: int, compression: tuple[str | None, int | None]) -> float:
    original = writer_module.COMPRESSION, writer_module.COMPRESSION_LEVEL
    writer_module.COMPRESSION, writer_module.COMPRESSION_LEVEL = compression
    try:
        started = time.perf_counter()
        writer = EpisodeWriter(path, {"task_id": "bench"}, frames[0].shape)
        for step in range(steps):
            numbers = {"step": step, "time": 0.0, "tick_before": step * 15, "tick_after": step * 15 + 15,
                       "latency_s": 1.2, "displacement": 2.0, "ineffective": 0, "source": "agent"}
            record = {"thought": "I see the clock tower ahead; walking toward it." * 3, "action": "MoveForward",
                      "raw_reply": '{"action": "MoveForward"}' * 4, "usage": {"input_tokens": 900}}
            writer.add_samples([{"time": step + i / 30, "tick": step * 15 + i, "map_id": 1, "x": 1.0, "y": 2.0,
                                 "z": 0.0, "facing": 0.0, "camera_yaw": 0.0, "camera_pitch": -12.0, "flags": 0,
                                 "dialogue_active": 0} for i in range(30)])
            writer.add_step(numbers, record, {"current": frames[step % len(frames)]})
        writer.finish({"success": False, "steps_used": steps})
        return time.perf_counter() - started
    finally:
        writer_module.COMPRESSION, writer_module.COMPRESSION_LEVEL = original


def _raw(path: Path, frames: list[np.ndarray], steps: int) -> float:
    started = time.perf_counter()
    with path.open("wb") as handle:
        for step in range(steps):
            handle.write(frames[step % len(frames)].tobytes())
            handle.flush()  # to the page cache, the same durability h5py's flush() gives
    return time.perf_counter() - started


def _seek_p95(path: Path, steps: int, samples: int = 200) -> float:
    rng = random.Random(1)
    times: list[float] = []
    with EpisodeReader(path) as episode:
        for _ in range(samples):
            index = rng.randrange(steps)
            started = time.perf_counter()
            episode.image("current", index)
            episode.record(index)
            times.append(time.perf_counter() - started)
    return float(np.percentile(times, 95) * 1000)


def bench_record(args: argparse.Namespace, emit: Emit) -> None:
    with tempfile.TemporaryDirectory(dir=args.tmp) as folder:
        base = Path(folder)
        for width, height in ((640, 360), (1280, 720)):
            frames = _frames(width, height)
            steps = 300 if width == 640 else 120
            chosen = (writer_module.COMPRESSION, writer_module.COMPRESSION_LEVEL)
            record_s = _record(base / f"r{width}.h5", frames, steps, chosen)
            raw_s = _raw(base / f"r{width}.bin", frames, steps)
            emit(args, f"record_fps_{width}x{height}", steps / record_s, "frames/s", steps / raw_s,
                 "raw_write_fps")
            emit(args, f"record_over_raw_ratio_{width}x{height}", record_s / raw_s, "ratio", raw_s * 1000 / steps,
                 "raw_ms_per_frame", ratio=record_s / raw_s)
            if width == 640:
                emit(args, "bytes_per_step_640x360", (base / "r640.h5").stat().st_size / steps, "bytes",
                     frames[0].nbytes, "raw_frame_bytes")
                choices: dict[str, Any] = {}
                options = {"none": (None, None), "lzf": ("lzf", None), "gzip1": ("gzip", 1), "gzip4": ("gzip", 4)}
                for label, compression in options.items():
                    path = base / f"c{label}.h5"
                    seconds = _record(path, frames, 200, compression)
                    choices[label] = (seconds, path.stat().st_size / 200, _seek_p95(path, 200))
                for name, (seconds, size, seek) in choices.items():
                    emit(args, f"compression_{name}_bytes_per_step", size, "bytes", choices["none"][1],
                         "uncompressed_bytes_per_step")
                    emit(args, f"compression_{name}_record_ms_per_step", seconds * 1000 / 200, "ms")
                    emit(args, f"compression_{name}_seek_ms_p95", seek, "ms")
                big = base / "big.h5"
                _record(big, frames, args.seek_steps, chosen)
                emit(args, "random_seek_ms_p95", _seek_p95(big, args.seek_steps), "ms")
                emit(args, "seek_file_steps", args.seek_steps, "steps")
        # The same episode (same agent seed) with the world's sound on (recorded) and off: what sound costs a step.
        heard, silent = base / "harness.h5", base / "silent.h5"
        emit(args, "harness_overhead_ms_per_step", _harness_overhead(heard, "on") * 1000, "ms",
             _harness_overhead(silent, "off") * 1000, "harness_overhead_ms_per_step_audio_off")
        _audio_sizes(args, emit, heard, silent)


def _audio_sizes(args: argparse.Namespace, emit: Emit, heard: Path, silent: Path) -> None:
    """/audio's bytes on disk per step, in the harness episode (the world's sound on), against the raw PCM; and the
    whole file against the same episode (same agent seed) recorded with the world's sound off."""
    import h5py

    with h5py.File(heard, "r") as file:
        group = file["audio"]
        steps = group["steps"].shape[0]
        stored = sum(group[name].id.get_storage_size() for name in ("pcm", "steps"))
        index = group["steps"][:]
        channels = group["pcm"].shape[2]
        pcm = [np.asarray(group["pcm"][int(row[0]):int(row[0]) - (-int(row[1]) // AUDIO_ROW_FRAMES)])
               for row in index if row[1] > 0]
    raw = float(sum(int(row[1]) for row in index if row[1] > 0) * channels * 2)
    emit(args, "audio_bytes_per_step", stored / steps, "bytes", raw / steps, "raw_pcm_bytes_per_step")
    with h5py.File(silent, "r") as file:
        silent_steps = file["steps"]["table"].shape[0]
    emit(args, "episode_bytes_per_step_audio_on", heard.stat().st_size / steps, "bytes",
         silent.stat().st_size / silent_steps, "episode_bytes_per_step_audio_off")
    rows = [row for block in pcm for row in block]
    for level in (1, 6):  # the level recordings use (writer.AUDIO_GZIP_LEVEL) against zlib's default
        started = time.perf_counter()
        size = sum(len(zlib.compress(audio_chunk_bytes(row, raw=True), level)) for row in rows)
        emit(args, f"audio_gzip{level}_bytes_per_step", size / steps, "bytes", raw / steps, "raw_pcm_bytes_per_step")
        emit(args, f"audio_gzip{level}_ms_per_step", (time.perf_counter() - started) * 1000 / steps, "ms")


HARNESS_STEPS = 60


def _random_episode(path: Path, steps: int, audio: str = "on", timed: list[float] | None = None) -> float:
    """Record a random agent's episode on the built-in world; returns its seconds. `timed` collects the seconds
    spent inside the game's hold calls."""
    from core.agents.base import RandomAgent
    from core.backends.profile import load_backend, position_units
    from core.evaluation.client import EvaluatorClient
    from core.evaluation.profile import load_profile
    from core.evaluation.tasks import load_task
    from core.game.builtin import BuiltinWorld
    from core.paths import PROFILES_DIR, TASKS_DIR
    from core.session.runner import EpisodeRunner, RunOptions

    profile = load_profile(PROFILES_DIR / "builtin_world.yaml")
    backend = load_backend("builtin")
    actions = backend.action_set()
    task = load_task(TASKS_DIR / "q08_site_navigation.yaml", profile.flags)
    with BuiltinWorld.launch(renderer="software", audio=audio) as world, \
            EvaluatorClient.launch(world.pid) as evaluator:
        evaluator.wait_locked()
        hold = world.hold

        def timed_hold(pad: Any, seconds: float) -> Any:
            started = time.perf_counter()
            try:
                return hold(pad, seconds)
            finally:
                if timed is not None:
                    timed[0] += time.perf_counter() - started

        world.hold = timed_hold
        started = time.perf_counter()
        options = RunOptions(step_budget=steps, position_units=position_units(backend))
        EpisodeRunner(world, evaluator, RandomAgent(actions, seed=2), actions, task, options, path).run()
        return time.perf_counter() - started


def _harness_overhead(path: Path, audio: str) -> float:
    """Per-step time of a recorded random-agent episode (with the world's sound on, it is recorded too), minus the
    time spent inside the game's hold calls."""
    in_game = [0.0]
    total = _random_episode(path, HARNESS_STEPS, audio=audio, timed=in_game)
    return (total - in_game[0]) / HARNESS_STEPS
