"""`bench world`'s sound figures: what the world's sound costs a lockstep step, measured against a silent
world in the same run (interleaved, so both see the same machine load).

step_overhead_ratio_audio compares the time a step takes inside the world, as the harness waits for it; on a
machine with a core to spare the world mixes a step's sound on a thread of its own while the frame renders,
so most of the sound's cost is hidden (core/world/sound/engine.py). audio_cpu_ratio compares the worlds' CPU
time instead: what the sound costs in work, whatever the cores."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence

from core.game.builtin import BuiltinWorld
from core.game.pad import PadState

TICKS = 15  # per step: 0.5 s of game time at 30 Hz, as the other world figures
ROUNDS = 4


def _in_process(world: BuiltinWorld, pads: Sequence[PadState]) -> tuple[float, float, float]:
    """The world's own wall and CPU time for the steps, and the CPU time it spent making sound."""
    world.reset("south_gate")
    timing = world.time_steps_in_detail([p.to_dict() for p in pads], TICKS)
    return timing.seconds, timing.cpu_seconds, timing.synth_seconds


def bench_audio(args: argparse.Namespace, emit: Callable[..., None], world: BuiltinWorld,
                pads: Sequence[PadState]) -> None:
    """`world` makes sound (the default); a silent one is started beside it for the baseline."""
    with BuiltinWorld.launch(renderer="software", audio="off") as silent:
        loud, quiet = [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]
        for _ in range(ROUNDS):
            for totals, game in ((loud, world), (quiet, silent)):
                for index, value in enumerate(_in_process(game, pads)):
                    totals[index] += value
    steps = ROUNDS * len(pads)
    emit(args, "audio_synth_ms_per_tick", loud[2] / (steps * TICKS) * 1000, "ms")
    emit(args, "step_overhead_ratio_audio", loud[0] / quiet[0], "ratio", quiet[0] / steps * 1000, "silent_step_ms",
         ratio=loud[0] / quiet[0])
    emit(args, "audio_cpu_ratio", loud[1] / quiet[1], "ratio", quiet[1] / steps * 1000, "silent_step_cpu_ms",
         ratio=loud[1] / quiet[1])
    step = world.reset("south_gate")
    read = 0.0
    for pad in pads:  # what a recorder pays to take each step's sound from the ring
        before, step = step, world.hold_ticks(pad, TICKS)
        started = time.perf_counter()
        world.audio_ticks(before.tick + 1, step.tick)
        read += time.perf_counter() - started
    emit(args, "audio_read_ms_per_step", read / len(pads) * 1000, "ms")
