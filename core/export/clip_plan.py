"""Which pictures a clip shows, for how long: a step range mapped onto game ticks.

A step runs from its `tick_before` (the frame the agent was shown, stored as the step's image) to its
`tick_after`. Continuous frames, where the episode recorded them, fill that interval at the ticks they
were taken, so a clip plays at the game's own rate: a frame stays on screen until the next one's tick.
Without continuous frames each step's image is shown for a fixed time. Everything is keyed by step
position and tick, never by wall-clock time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from core.export import ExportError

BUILTIN_TICK_HZ = 30.0  # files written before `tick_hz` was recorded came from the built-in world
END_HOLD_S = 1.0        # the last picture stays up a moment, so a clip does not stop mid-motion


@dataclass(frozen=True)
class Shot:
    kind: Literal["step", "frame"]  # a step's image, or a continuous frame
    index: int                      # step position, or continuous frame index
    step: int                       # position of the step whose overlays go with it
    tick: int
    seconds: float                  # how long it stays on screen
    end_tick: int = 0               # the game time it stands for: ticks tick + 1 .. end_tick (its sound)


@dataclass(frozen=True)
class ClipPlan:
    shots: tuple[Shot, ...]
    first: int              # step positions, inclusive
    last: int
    continuous: bool        # continuous frames were used
    tick_hz: float

    @property
    def seconds(self) -> float:
        return sum(shot.seconds for shot in self.shots)


def parse_step_range(text: str, steps: np.ndarray) -> tuple[int, int]:
    """'40-75', '40' or '40-' (to the end) in step numbers -> inclusive step positions. Raises ExportError."""
    match = re.fullmatch(r"\s*(\d+)\s*(?:([-–:])\s*(\d*)\s*)?", text or "")
    if match is None:
        raise ExportError(f"--steps must look like 40-75 (step numbers, inclusive), 40, or 40- (to the end); "
                          f"got {text!r}")
    first_step = int(match.group(1))
    last_step = int(match.group(3)) if match.group(3) else (int(steps[-1]) if match.group(2) else first_step)
    return step_positions(first_step, last_step, steps)


def step_positions(first_step: int, last_step: int, steps: np.ndarray) -> tuple[int, int]:
    if len(steps) == 0:
        raise ExportError("the episode holds no complete step")
    available = f"this episode has steps {int(steps[0])}-{int(steps[-1])}"
    if first_step > last_step:
        raise ExportError(f"the step range {first_step}-{last_step} runs backwards; {available}")
    if first_step > int(steps[-1]) or last_step < int(steps[0]):
        raise ExportError(f"steps {first_step}-{last_step} are not in the episode; {available}")
    first = int(np.searchsorted(steps, first_step, side="left"))
    last = int(np.searchsorted(steps, last_step, side="right")) - 1
    return first, max(first, last)


def plan_clip(tick_before: np.ndarray, tick_after: np.ndarray, frame_ticks: np.ndarray, first: int, last: int,
              tick_hz: float, step_seconds: float | None = 0.5, use_frames: bool = True,
              speed: float = 1.0) -> ClipPlan:
    """The shots of steps first..last (positions, inclusive). `speed` > 1 plays faster. Without continuous
    frames each step's image stays `step_seconds`, or with None its own game time (its ticks at `tick_hz`)."""
    if tick_hz <= 0 or (step_seconds is not None and step_seconds <= 0) or speed <= 0:
        raise ExportError("the tick rate, seconds per step and speed must all be positive")
    continuous = use_frames and len(frame_ticks) > 0
    if not continuous:
        shots = [Shot("step", i, i, int(tick_before[i]),
                      (step_seconds if step_seconds is not None else _game_seconds(tick_before[i], tick_after[i],
                                                                                   tick_hz)) / speed,
                      int(tick_after[i]))
                 for i in range(first, last + 1)]
        return ClipPlan(tuple(shots), first, last, False, tick_hz)
    timed: list[tuple[int, Literal["step", "frame"], int, int]] = []  # (tick, kind, index, step)
    for i in range(first, last + 1):
        low, high = int(tick_before[i]), int(tick_after[i])
        timed.append((low, "step", i, i))
        inside = np.nonzero((frame_ticks > low) & (frame_ticks <= high))[0]
        timed.extend((int(frame_ticks[j]), "frame", int(j), i) for j in inside)
    end_tick = int(tick_after[last])
    shots: list[Shot] = []
    for k, (tick, kind, index, step) in enumerate(timed):
        until = timed[k + 1][0] if k + 1 < len(timed) else end_tick
        seconds = (until - tick) / tick_hz if k + 1 < len(timed) else max((end_tick - tick) / tick_hz, END_HOLD_S)
        if seconds <= 0:
            continue  # the same moment as the next picture (a step's image is its previous step's last frame)
        shots.append(Shot(kind, index, step, tick, seconds / speed, until))
    return ClipPlan(tuple(shots), first, last, True, tick_hz)


def _game_seconds(tick_before: int, tick_after: int, tick_hz: float) -> float:
    """A step's own game time: its ticks, at least one (a step that took no tick still shows)."""
    return max(1, int(tick_after) - int(tick_before)) / tick_hz


def tick_rate(metadata: dict[str, Any], override: float | None = None) -> tuple[float, str | None]:
    """The game's ticks per second, and a note when it had to be assumed."""
    if override is not None:
        return float(override), None
    recorded = metadata.get("tick_hz")
    if isinstance(recorded, (int, float)) and recorded > 0:
        return float(recorded), None
    return BUILTIN_TICK_HZ, (f"the episode does not record its tick rate (recorded before it was stored); assuming "
                             f"{BUILTIN_TICK_HZ:g} ticks/s, the built-in world's. Pass --tick-hz for another game.")
