"""`bench world`'s sound figures: what the world's sound costs a lockstep step, measured against a silent
world in the same run (interleaved, so both see the same machine load)."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence

from core.game.builtin import BuiltinWorld
from core.game.pad import PadState

TICKS = 15  # per step: 0.5 s of game time at 30 Hz, as the other world figures
ROUNDS = 4


def _in_process(world: BuiltinWorld, pads: Sequence[PadState]) -> tuple[float, float]:
    """The world's own time for the steps, and the part of it spent making sound."""
    world.reset("south_gate")
    header, _ = world._request({"op": "time_steps", "pads": [p.to_dict() for p in pads], "ticks": TICKS})
    return float(header["seconds"]), float(header.get("synth_seconds", 0.0))


def bench_audio(args: argparse.Namespace, emit: Callable[..., None], world: BuiltinWorld,
                pads: Sequence[PadState]) -> None:
    """`world` makes sound (the default); a silent one is started beside it for the baseline."""
    with BuiltinWorld.launch(renderer="software", audio="off") as silent:
        loud = quiet = synth = 0.0
        for _ in range(ROUNDS):
            seconds, made = _in_process(world, pads)
            loud, synth = loud + seconds, synth + made
            quiet += _in_process(silent, pads)[0]
    steps = ROUNDS * len(pads)
    emit(args, "audio_synth_ms_per_tick", synth / (steps * TICKS) * 1000, "ms")
    emit(args, "step_overhead_ratio_audio", loud / quiet, "ratio", quiet / steps * 1000, "silent_step_ms",
         ratio=loud / quiet)
    step = world.reset("south_gate")
    read = 0.0
    for pad in pads:  # what a recorder pays to take each step's sound from the ring
        before, step = step, world.hold_ticks(pad, TICKS)
        started = time.perf_counter()
        world.audio_ticks(before.tick + 1, step.tick)
        read += time.perf_counter() - started
    emit(args, "audio_read_ms_per_step", read / len(pads) * 1000, "ms")
