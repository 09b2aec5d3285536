"""The world's rules and sound without its renderer, in this process: fast enough for many ticks.

The sound tests drive the same Simulation and SoundEngine the world process does, and read the same audio
ring; what happened (footfalls, bumps) comes from the director's own events, which never leave the world."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core.game.audio_ring import AudioRing
from core.game.pad import PadState
from core.paths import DEFAULT_WORLD
from core.world.content import StartState, WorldSpec, load_world
from core.world.layout import build_layout
from core.world.simulation import Simulation
from core.world.sound.engine import SoundEngine
from core.world.sound.events import SoundEvent

_SPEC: WorldSpec | None = None


def town() -> WorldSpec:
    global _SPEC
    if _SPEC is None:
        _SPEC = load_world(DEFAULT_WORLD)
    return _SPEC


@dataclass
class SoundRig:
    spec: WorldSpec
    simulation: Simulation
    engine: SoundEngine
    reader: AudioRing
    events: list[SoundEvent] = field(default_factory=list)

    @property
    def rate(self) -> int:
        return self.engine.format.rate

    @property
    def per_tick(self) -> int:
        return self.engine.format.samples_per_tick

    def start(self, x: float, y: float, facing: float, camera_yaw: float | None = None) -> None:
        start = StartState(pos=(x, y), facing=facing, camera_yaw=facing if camera_yaw is None else camera_yaw)
        self.simulation.state = self.simulation.start_state(start)
        self.engine.restart()
        self.events.clear()

    def hold(self, pad: PadState, ticks: int, block: int = 15) -> np.ndarray:
        """Hold the pad for `ticks`, mixing every `block` ticks as a lockstep step would; the PCM heard."""
        heard = []
        for index in range(ticks):
            self.simulation.step(pad)
            self.events.extend(self.engine.observe().events)
            if (index + 1) % block == 0 or index == ticks - 1:
                self.engine.flush()
                self.engine.wait()
                tick = self.simulation.state.tick
                heard.append(self.reader.read(tick - (index % block), tick))
        return np.concatenate(heard)

    def play(self, holds: Iterable[tuple[PadState, int]], block: int = 15) -> np.ndarray:
        return np.concatenate([self.hold(pad, ticks, block) for pad, ticks in holds])

    def close(self) -> None:
        self.reader.close()
        self.engine.close()


def sound_rig(folder: Path, spec: WorldSpec | None = None, mixing_thread: bool | None = None) -> SoundRig:
    spec = spec or town()
    layout = build_layout(spec)
    simulation = Simulation(spec, layout.terrain, layout.collision, layout.speakers)
    engine = SoundEngine(spec, simulation, layout.terrain, folder / "audio.bin", mixing_thread)
    return SoundRig(spec, simulation, engine, AudioRing.attach(folder / "audio.bin"))
