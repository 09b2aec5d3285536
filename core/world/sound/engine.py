"""The world's sound, tick by tick: the director's events, mixed, written to the audio ring.

Ticks are gathered and mixed in blocks when a frame is published (a lockstep hold of 15 ticks is one
block), which costs far less than mixing each tick alone and sounds bit for bit the same (mixer.py). Where
the machine has a core to spare (MIXING_THREAD_CORES or more), the block is mixed on a thread of its own
while the frame renders (Panda3D lets go of the GIL while it draws, numpy while it computes); otherwise it
is mixed in line, just before the frame. Either way the world waits for it before it answers: a step's sound
is in the ring by the time its frame is.

Why not always the thread: on a machine of two cores the harness and the renderer already have them, and the
mixing beside the render costs the world's process more than it saves the step. `bench world` on such a
machine, both in one run: sound added 20.9% CPU per step mixed on the thread and 15.2% mixed in line, the
step's own time 16.8% and 15.1%; a world whose mixer does nothing at all added 9.5% and 3.2%.

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
from core.world.sound.bank_cache import cached_banks
from core.world.sound.director import SoundDirector
from core.world.sound.events import TickSound
from core.world.sound.ground import Ground
from core.world.sound.mixer import MAX_BLOCK_TICKS, Mixer
from core.world.terrain import Terrain

TRUTH_ENV = "POKEGYM_TEST_SOUND_TRUTH"
MIXING_THREAD_CORES = 4  # cores this process may run on, from which the mixing gets a thread of its own
TRUTH_FILE = "sound_truth.jsonl"
CHANNELS = 2


def audio_format(spec: WorldSpec) -> AudioFormat:
    return AudioFormat(spec.sound.rate, CHANNELS, round(spec.sound.rate / spec.tick_hz))


class SoundEngine:
    def __init__(self, spec: WorldSpec, simulation: Simulation, terrain: Terrain, ring_path: Path,
                 mixing_thread: bool | None = None) -> None:
        """mixing_thread: mix on a thread of its own (True) or in line (False); None: by the cores there are."""
        self.format = audio_format(spec)
        ground_z = {s.id: terrain.ground_height(*s.pos) if s.pos is not None else 0.0 for s in spec.sound.sources}
        self.director = SoundDirector(spec, simulation, Ground(spec, terrain), self.format.samples_per_tick)
        self.mixer = Mixer(spec, cached_banks(spec), self.format.samples_per_tick, ground_z)
        capacity = max(MAX_BLOCK_TICKS, math.ceil(spec.sound.ring_seconds * spec.tick_hz))
        self.ring = AudioRing.create(ring_path, self.format, capacity)
        self.pending: list[TickSound] = []
        self.synth_seconds = 0.0  # CPU time spent on sound (both threads), for `bench world`
        self.synth_ticks = 0
        if mixing_thread is None:
            mixing_thread = _cores() >= MIXING_THREAD_CORES
        self._mixing: ThreadPoolExecutor | None = None
        if mixing_thread:
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
            if self._mixing is None:
                self._mix(ticks)
            else:
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
            if self._mixing is not None:
                self._mixing.shutdown(wait=True)
            if self._truth is not None:
                self._truth.close()
            self.ring.close()


def _cores() -> int:
    """The cores this process may run on (a container or taskset may allow fewer than the machine has)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1
