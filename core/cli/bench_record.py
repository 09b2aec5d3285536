"""`python main.py bench record`: episode recording speed, size and seek latency, against plain writes."""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from core.recording import writer as writer_module
from core.recording.reader import EpisodeReader
from core.recording.writer import EpisodeWriter

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
        emit(args, "harness_overhead_ms_per_step", _harness_overhead(base) * 1000, "ms")


def _harness_overhead(folder: Path) -> float:
    """Per-step time of a recorded random-agent episode, minus the time spent inside the game's hold calls."""
    from core.agents.actions import ActionSet
    from core.agents.base import RandomAgent
    from core.evaluation.client import EvaluatorClient
    from core.evaluation.profile import load_profile
    from core.evaluation.tasks import load_task
    from core.game.builtin import BuiltinWorld
    from core.paths import PROFILES_DIR, TASKS_DIR
    from core.session.runner import EpisodeRunner, RunOptions

    profile = load_profile(PROFILES_DIR / "builtin_world.yaml")
    actions = ActionSet.from_profile_data(profile.actions)
    task = load_task(TASKS_DIR / "q08_site_navigation.yaml", profile.flags)
    with BuiltinWorld.launch(renderer="software") as world, EvaluatorClient.launch(world.pid) as evaluator:
        evaluator.wait_locked()
        in_game = [0.0]
        hold = world.hold

        def timed_hold(pad: Any, seconds: float) -> Any:
            started = time.perf_counter()
            try:
                return hold(pad, seconds)
            finally:
                in_game[0] += time.perf_counter() - started

        world.hold = timed_hold
        steps = 60
        started = time.perf_counter()
        EpisodeRunner(world, evaluator, RandomAgent(actions, seed=2), actions, task, RunOptions(step_budget=steps),
                      folder / "harness.h5").run()
        total = time.perf_counter() - started
    return (total - in_game[0]) / steps
