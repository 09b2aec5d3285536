"""A long synthetic episode for `bench replay` and tests: the real writer, a wandering path with
stuck spells (deadlock suggestions), interventions and parse errors, the given frames and, if asked, sound."""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import numpy as np

from core.audio.clip import AudioLayout
from core.episode.metrics import StepFacts, episode_metrics
from core.recording.writer import EpisodeWriter

TICKS_PER_STEP = 30
SOUND = AudioLayout(24000, 2)  # the built-in world's: 800 frames a tick at 30 ticks/s


def synthetic_step_sound(stuck: bool, seed: int) -> np.ndarray:
    """One step's sound: quiet noise, and on a stuck step a loud low thud (100 Hz, decaying) at its start, as the
    built-in world's bump sounds."""
    frames = TICKS_PER_STEP * SOUND.rate // 30
    rng = np.random.default_rng(seed)
    pcm = rng.normal(0, 60, (frames, SOUND.channels))
    if stuck:
        t = np.arange(frames) / SOUND.rate
        pcm += (12000 * np.sin(2 * np.pi * 100 * t) * np.exp(-t / 0.08))[:, None]
    return np.clip(np.round(pcm), -32768, 32767).astype(np.int16)


def write_long_episode(path: Path, steps: int, frames: list[np.ndarray], seed: int = 0,
                       frames_per_step: int = 0, sound: bool = False, position_units: str | None = "m") -> Path:
    """`frames_per_step` continuous frames are recorded during each step, all of brightness 250, so
    that a test can tell them from the step images. `sound`: each step's sound too (synthetic_step_sound)."""
    rng = random.Random(seed)
    metadata = {"task_id": "synthetic_long", "granularity": "goal_only", "category": "navigation",
                "agent": "synthetic", "step_budget": steps, "audio": "on" if sound else "unavailable",
                "position_units": position_units}
    writer = EpisodeWriter(path, metadata, frames[0].shape, continuous_frames=frames_per_step > 0,
                           audio=SOUND if sound else None)
    between = np.full(frames[0].shape, 250, np.uint8)
    x = y = heading = 0.0
    stuck_left = 0
    facts: list[StepFacts] = []
    for index in range(steps):
        if stuck_left == 0 and rng.random() < 0.01:
            stuck_left = rng.randint(3, 12)  # walks into a wall for a while
        moving = stuck_left == 0
        stuck_left = max(0, stuck_left - 1)
        heading += rng.uniform(-0.3, 0.3)
        before = (x, y)
        samples: list[dict[str, Any]] = []
        for i in range(TICKS_PER_STEP):
            if moving:
                x, y = x + math.cos(heading) * 0.05, y + math.sin(heading) * 0.05
            samples.append({"time": index + i / TICKS_PER_STEP, "tick": index * TICKS_PER_STEP + i + 1, "map_id": 1,
                            "x": x, "y": y, "z": 0.0, "facing": math.degrees(heading), "camera_yaw": 0.0,
                            "camera_pitch": -12.0, "flags": 0, "dialogue_active": 0})
        displacement = math.hypot(x - before[0], y - before[1])
        said = "progressing" if moving else rng.choice(["stuck", "unsure"])
        fact = StepFacts("MoveForward", True, displacement, said)
        facts.append(fact)
        intervention: dict[str, Any] | None = {"step": index + 1, "source": "auto", "kind": "push_back", "params": {}} \
            if not moving and rng.random() < 0.1 else None
        record: dict[str, Any] = {
            "action": "MoveForward", "action_params": {}, "raw_reply": '{"action": "MoveForward"}',
            "thought": f"Step {index + 1}: heading on towards the goal.", "self_assessment": fact.self_assessment,
            "parse_error": "no JSON object found" if rng.random() < 0.005 else None,
            "macro": [], "usage": {"input_tokens": 900, "output_tokens": 60}, "intervention": intervention,
            "memory": "", "reflection": "", "movement": True}
        numbers = {"step": index + 1, "time": float(index), "tick_before": index * TICKS_PER_STEP,
                   "tick_after": (index + 1) * TICKS_PER_STEP, "latency_s": 1.0, "displacement": displacement,
                   "ineffective": int(fact.ineffective), "source": "agent"}
        writer.add_samples(samples)
        for piece in range(1, frames_per_step + 1):
            writer.add_frame(between, index * TICKS_PER_STEP + piece * TICKS_PER_STEP // (frames_per_step + 1))
        writer.add_step(numbers, record, {"current": frames[index % len(frames)]})
        if sound:
            writer.add_audio(index, synthetic_step_sound(not moving, seed * 100_003 + index),
                             index * TICKS_PER_STEP + 1, (index + 1) * TICKS_PER_STEP)
    metrics = episode_metrics(facts, False)
    writer.finish({"success": False, "success_step": None, "steps_used": steps, "end_reason": "budget",
                   "error": None, "failure_category_suggestion": metrics.failure_category,
                   "metrics": metrics.to_json(), "privileged": False, "reached_goal_area": False})
    return path
