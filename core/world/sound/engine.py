"""The world's sound, tick by tick: the director's events, mixed, written to the audio ring.

Ticks are gathered and mixed in blocks when a frame is published (a lockstep hold of 15 ticks is one
block), which costs far less than mixing each tick alone and sounds bit for bit the same (mixer.py). The block
is mixed on a thread of its own while the frame renders (Panda3D lets go of the GIL while it draws, numpy
while it computes), and the world waits for both before it answers: a step's sound is in the ring by the
time its frame is.

TEST ONLY: with POKEGYM_TEST_SOUND_TRUTH=1 in its environment, the world also appends every sound event to
sound_truth.jsonl beside the audio ring, so tests can check that the sound carries what happened (a bump is
heard when the character hits something). Agents and the evaluator never read it; the harness never sets it.
"""

from __future__ import annotations

import json
import math
import os
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import TextIO

from core.game.audio_ring import AudioFormat, AudioRing
from core.world.content import WorldSpec
from core.world.simulation import Simulation
from core.world.sound.banks import build_banks
from core.world.sound.director import SoundDirector
from core.world.sound.events import TickSound
from core.world.sound.ground import Ground
from core.world.sound.mixer import MAX_BLOCK_TICKS, Mixer
from core.world.terrain import Terrain

TRUTH_ENV = "POKEGYM_TEST_SOUND_TRUTH"
TRUTH_FILE = "sound_truth.jsonl"
CHANNELS = 2


def audio_format(spec: WorldSpec) -> AudioFormat:
    return AudioFormat(spec.sound.rate, CHANNELS, round(spec.sound.rate / spec.tick_hz))


class SoundEngine:
    def __init__(self, spec: WorldSpec, simulation: Simulation, terrain: Terrain, ring_path: Path) -> None:
        self.format = audio_format(spec)
        ground_z = {s.id: terrain.ground_height(*s.pos) if s.pos is not None else 0.0 for s in spec.sound.sources}
        self.director = SoundDirector(spec, simulation, Ground(spec, terrain), self.format.samples_per_tick)
        self.mixer = Mixer(spec, build_banks(spec), self.format.samples_per_tick, ground_z)
        capacity = max(MAX_BLOCK_TICKS, math.ceil(spec.sound.ring_seconds * spec.tick_hz))
        self.ring = AudioRing.create(ring_path, self.format, capacity)
        self.pending: list[TickSound] = []
        self.synth_seconds = 0.0  # CPU time spent on sound (both threads), for `bench world`
        self.synth_ticks = 0
        self._mixing = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sound-mixer")
        # Start its thread now, while the world still blocks Ctrl+C in new threads (core/world/stop_signals.py):
        # a thread started later would inherit the main thread's unblocked mask and could take the signal.
        self._mixing.submit(lambda: None).result()
        self._job: Future[None] | None = None
        self._truth: TextIO | None = None
        if os.environ.get(TRUTH_ENV) == "1":
            self._truth = open(ring_path.parent / TRUTH_FILE, "a", encoding="utf-8")  # noqa: SIM115 - kept open

    def restart(self) -> None:
        """The tick counter jumps (reset, restore): what played stops, and a new epoch of the ring begins."""
        self.wait()
        self.pending.clear()
        self.director.restart()
        self.mixer.restart(self.director.listener())
        self.ring.begin_epoch()
        self._log({"kind": "restart", "tick": self.director.simulation.state.tick})

    def observe(self) -> TickSound:
        """After each simulated tick: what it sounds like (mixed at the next flush)."""
        if self._job is not None:
            self.wait()  # the mixer's voices are not touched while a block is being mixed
        started = time.perf_counter()
        sound = self.director.observe()
        if sound.events:
            self.mixer.add(sound.events)
        self.pending.append(sound)
        if self._truth is not None:
            for event in sound.events:
                self._log({"kind": type(event).__name__.lower(), **asdict(event)})
        self.synth_seconds += time.perf_counter() - started  # in this thread, nothing else runs meanwhile
        if len(self.pending) >= MAX_BLOCK_TICKS:
            self.flush()
        return sound

    def flush(self) -> None:
        """Start mixing the ticks gathered so far into the ring; wait() for it before the frame that shows them
        is published."""
        self.wait()
        if self.pending:
            ticks, self.pending = self.pending, []
            self._job = self._mixing.submit(self._mix, ticks)

    def wait(self) -> None:
        """Until the ticks flushed are in the ring (an error in the mixing is raised here)."""
        if self._job is not None:
            job, self._job = self._job, None
            job.result()
            if self._truth is not None:
                self._truth.flush()

    def _mix(self, ticks: list[TickSound]) -> None:
        started = time.thread_time()
        self.ring.write(ticks[0].tick, self.mixer.render(ticks))
        self.synth_ticks += len(ticks)
        self.synth_seconds += time.thread_time() - started

    def _log(self, record: dict[str, object]) -> None:
        if self._truth is not None:
            self._truth.write(json.dumps(record) + "\n")

    def close(self) -> None:
        try:
            self.wait()
        finally:
            self._mixing.shutdown(wait=True)
            if self._truth is not None:
                self._truth.close()
            self.ring.close()
