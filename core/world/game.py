"""The world as one object: rules, ground-truth block, renderer, frame ring and sound, tick by tick."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Generator
from pathlib import Path

import numpy as np

from core.game.frames import FrameRing
from core.game.pad import PadState
from core.world.content import StartState, WorldSpec
from core.world.layout import build_layout
from core.world.overlay import draw_dialogue, draw_prompt
from core.world.panda_setup import RendererChoice
from core.world.renderer import Renderer
from core.world.scene import SceneBuilder
from core.world.simulation import GameState, Simulation
from core.world.sound.engine import SoundEngine
from core.world.state_block import StateBlock


class UnknownStartState(KeyError):
    pass


class BadStartState(ValueError):
    """A start state given inline (captured in the studio) that this world cannot place the character at."""


# A captured position is rounded for the task file, which can put it a hair inside the wall the
# character stood against; push it out by up to this much, and refuse anything deeper.
START_PUSH_OUT_M = 0.25


class World:
    def __init__(self, spec: WorldSpec, frames_path: Path, width: int, height: int,
                 renderer: RendererChoice = "software", audio: bool = True) -> None:
        self.spec = spec
        layout = build_layout(spec)
        self.simulation = Simulation(spec, layout.terrain, layout.collision, layout.speakers)
        self.block = StateBlock(spec.map_id)
        self.renderer = Renderer(spec, layout, SceneBuilder(spec, layout).build(), width, height, renderer)
        self.ring = FrameRing.create(frames_path, width, height)
        # The sound (audio ring beside the frame ring), or None with `--audio off`.
        self.sound = SoundEngine(spec, self.simulation, layout.terrain, frames_path.parent / "audio.bin") \
            if audio else None
        self.frame_no = 0
        self.reset(next(iter(spec.start_states)))

    @property
    def state(self) -> GameState:
        return self.simulation.state

    def reset(self, start: str | StartState) -> int:
        """Return to a named start state of the world file, or to one given inline."""
        if isinstance(start, str):
            if start not in self.spec.start_states:
                known = ", ".join(self.spec.start_states)
                raise UnknownStartState(f"unknown start state {start!r}; this world defines: {known}")
            state = self.simulation.start_state(self.spec.start_states[start])
        else:
            state = self._inline_start(start)
        self.simulation.state = state
        self.block.update(self.simulation.state)
        if self.sound is not None:
            self.sound.restart()
        return self.publish()

    def _inline_start(self, start: StartState) -> GameState:
        numbers = [*start.pos, start.facing, start.camera_pitch, start.camera_yaw or 0.0]
        if not all(math.isfinite(n) for n in numbers):
            raise BadStartState("the start state's position and angles must be finite numbers")
        unknown = sorted(set(start.flags) - set(self.spec.flags))
        if unknown:
            raise BadStartState(f"the start state sets flags this world does not define: {unknown}")
        x, y = start.pos
        x0, y0, x1, y1 = self.spec.bounds
        if not (x0 <= x <= x1 and y0 <= y <= y1):
            raise BadStartState(f"the start position ({x:g}, {y:g}) is outside the world's bounds "
                                f"{self.spec.bounds}")
        state = self.simulation.start_state(start)
        ch = self.spec.character
        free_x, free_y = self.simulation.collision.move(x, y, 0.0, 0.0, ch.radius, state.flags,
                                                        self.simulation.terrain.on_deck)
        if math.hypot(free_x - x, free_y - y) > START_PUSH_OUT_M:
            raise BadStartState(f"the start position ({x:g}, {y:g}) is inside an obstacle")
        state.x, state.y = free_x, free_y
        state.z = self.simulation.terrain.ground_height(free_x, free_y)
        return state

    def restore(self, state: GameState) -> int:
        self.simulation.state = state
        self.block.update(state)
        if self.sound is not None:
            self.sound.restart()
        return self.publish()

    def relocate_state(self) -> int:
        """Move the state block to a new allocation, as a game does when it is restarted in place."""
        old = self.block
        self.block = StateBlock(self.spec.map_id)
        old.wipe()
        self.block.update(self.simulation.state)
        return self.publish()

    def tick(self, pad: PadState) -> None:
        self.simulation.step(pad)
        self.block.update(self.simulation.state)
        if self.sound is not None:
            self.sound.observe()

    def advance(self, pad: PadState, ticks: int) -> int:
        """Lockstep: `ticks` ticks with `pad` held, then one published frame."""
        for _ in range(ticks):
            self.tick(pad)
        return self.publish()

    def compose(self, yaw_offset: float = 0.0) -> np.ndarray:
        frame = self.renderer.render(self.simulation.state, yaw_offset)
        dialogue = self.simulation.current_dialogue()
        if dialogue is not None:
            draw_dialogue(frame, *dialogue)
        elif yaw_offset == 0.0:
            target = self.simulation.speaker_in_reach()
            if target >= 0:
                speaker = self.simulation.speakers[target]
                draw_prompt(frame, f"{speaker.verb}: {speaker.name}")
        return frame

    def publish(self) -> int:
        if self.sound is not None:
            self.sound.flush()  # mixed while the frame renders
        frame = self.compose()
        if self.sound is not None:
            self.sound.wait()  # a frame's ticks are all in the audio ring by the time it is shown
        self.frame_no = self.ring.write(frame, self.simulation.state.tick)
        return self.frame_no

    @contextlib.contextmanager
    def silenced(self) -> Generator[None]:
        """For `bench world` only: the same steps without making sound, in this process, so the sound's cost is
        measured against the same world (a silent world in another process differs by more than the sound
        costs). Sound goes on afterwards from the pose then, as after a restore."""
        sound, self.sound = self.sound, None
        try:
            yield
        finally:
            self.sound = sound
            if sound is not None:
                sound.restart()

    def close(self) -> None:
        if self.sound is not None:
            self.sound.close()
        self.ring.close()
        self.renderer.close()
