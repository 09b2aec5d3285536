"""Turns each tick of the simulation into sound events: strides, bumps, voices and cues.

It only watches: it reads the state after each tick and what the walk ran into (Simulation.contact), and
keeps its own little memory (distance since the last footfall, whether the character is still pressing
against something). That memory is not game state; a reset or a restore starts it afresh.
"""

from __future__ import annotations

import math

from core.world.content import WorldSpec
from core.world.geometry2d import heading_vector
from core.world.simulation import GameState, Simulation
from core.world.sound.events import Bump, Cue, Footstep, Hush, Listener, SoundEvent, Speech, TickSound
from core.world.sound.ground import Ground
from core.world.sound.spatial import HEAD_M

PRESSING_SHARE = 0.35  # pressing, not grazing: at least this share of the step was pushed back
PRESSING_MIN_M = 0.004
NEW_CONTACT_TICKS = 4  # a new bump at least this long after the last one
REPEAT_S = 0.4  # while still pressing, bump again this often
RELEASE_TICKS = 3  # contact counts as ended after this many ticks without pressing
AT_REST_M = 0.002  # moved less than this in a tick: standing
FIRST_STEP_SHARE = 0.55  # starting to walk, the first footfall comes after this share of a stride
FOOT_SIDE_M = 0.12
SPEECH_S_PER_CHAR = 0.055


class SoundDirector:
    def __init__(self, spec: WorldSpec, simulation: Simulation, ground: Ground, samples_per_tick: int) -> None:
        self.spec = spec
        self.simulation = simulation
        self.ground = ground
        self.samples_per_tick = samples_per_tick
        self.kinds = {item.id: item.kind for item in spec.interactables}
        self.npcs = {npc.id for npc in spec.npcs}
        self.repeat_ticks = max(1, round(REPEAT_S * spec.tick_hz))
        # read once: observe() runs every tick, and the world file's models are slow to look into
        self._stride_m = spec.sound.footsteps.stride_m
        self._run_speed = spec.character.run_speed
        self._radius = spec.character.radius
        self.restart()

    def restart(self) -> None:
        s = self.simulation.state
        self._x, self._y = s.x, s.y
        self._dialogue = (s.dialogue_target, s.dialogue_line)
        self._stride = 0.0
        self._moving = False
        self._foot = 1
        self._since_bump = 10 ** 6
        self._pressing = False
        self._released = 0

    def listener(self) -> Listener:
        s = self.simulation.state
        return Listener(s.x, s.y, s.z + HEAD_M, s.cam_yaw)

    def observe(self) -> TickSound:
        """What the tick just simulated sounds like."""
        s = self.simulation.state
        sound = TickSound(s.tick, Listener(s.x, s.y, s.z + HEAD_M, s.cam_yaw))
        self._steps(s, sound.events)
        self._bumps(s, sound.events)
        if (s.dialogue_target, s.dialogue_line) != self._dialogue:
            self._dialogues(sound.events)
        self._x, self._y = s.x, s.y
        return sound

    # -- footsteps --------------------------------------------------------------------
    def _steps(self, s: GameState, events: list[SoundEvent]) -> None:
        moved = math.hypot(s.x - self._x, s.y - self._y)
        if moved < AT_REST_M:
            self._moving = False
            return
        sim, stride = self.simulation, self._stride_m
        if not self._moving:
            self._stride = stride * FIRST_STEP_SHARE
            self._moving = True
        before = self._stride
        self._stride += moved
        if self._stride < stride:  # most ticks: no footfall, nothing more to work out
            return
        speed = moved / sim.dt
        level = 0.55 + 0.45 * min(1.0, speed / self._run_speed)
        while self._stride >= stride:
            # where in the tick the stride completed, so that footfalls keep an even beat
            share = min(1.0, max(0.0, (stride - before) / moved))
            x, y = self._x + (s.x - self._x) * share, self._y + (s.y - self._y) * share
            self._foot = -self._foot
            rx, ry = heading_vector(s.facing - 90.0)  # to the character's right
            fx, fy = x + rx * FOOT_SIDE_M * self._foot, y + ry * FOOT_SIDE_M * self._foot
            offset = min(self.samples_per_tick - 1, int(share * self.samples_per_tick))
            events.append(Footstep(s.tick, offset, self.ground.surface_at(x, y), fx, fy, s.z, level))
            self._stride -= stride
            before -= stride  # a second footfall in the same tick (only with a very short stride)

    # -- bumps ------------------------------------------------------------------------
    def _bumps(self, s: GameState, events: list[SoundEvent]) -> None:
        sim = self.simulation
        contact = sim.contact
        self._since_bump += 1
        pressing, push = False, 0.0
        if contact is not None:
            push = math.hypot(contact.push_x, contact.push_y)
            pressing = push >= PRESSING_MIN_M and push >= PRESSING_SHARE * sim.attempted_m
        if not pressing:
            self._released += 1
            if self._released >= RELEASE_TICKS:
                self._pressing = False
            return
        assert contact is not None
        self._released = 0
        repeat = self._pressing
        wait = self.repeat_ticks if repeat else NEW_CONTACT_TICKS
        self._pressing = True
        if self._since_bump < wait:
            return
        self._since_bump = 0
        strength = min(1.0, push / (self._run_speed * sim.dt))
        level = (0.5 + 0.5 * strength) * (0.8 if repeat else 1.0)
        radius = self._radius
        x, y = s.x - contact.push_x / push * radius, s.y - contact.push_y / push * radius
        # at ear height: a shoulder meets the wall, and the ear on that side hears it
        events.append(Bump(s.tick, 0, contact.material, x, y, s.z + HEAD_M, level, repeat))

    # -- dialogue -----------------------------------------------------------------------
    def _dialogues(self, events: list[SoundEvent]) -> None:
        s, sim = self.simulation.state, self.simulation
        now = (s.dialogue_target, s.dialogue_line)
        before, self._dialogue = self._dialogue, now
        if now == before:
            return
        if now[0] < 0:
            events += [Hush(s.tick), Cue(s.tick, "dialogue_close", None)]
            return
        speaker = sim.speakers[now[0]]
        place = (speaker.x, speaker.y, sim.terrain.ground_height(speaker.x, speaker.y) + HEAD_M)
        opened = before[0] != now[0]
        if opened:
            events.append(Cue(s.tick, "dialogue_open", None))
        if speaker.id in self.npcs:
            line = sim.current_dialogue()
            length = len(line[1]) if line is not None else 20
            events.append(Speech(s.tick, speaker.id, *place, min(4.0, max(0.5, SPEECH_S_PER_CHAR * length))))
        elif opened:
            kind = self.kinds.get(speaker.id, "")
            variant = self.spec.dialogues[speaker.dialogue][s.dialogue_variant]
            if kind == "sign" or variant.set_flags or variant.clear_flags:  # the thing is done, not just looked at
                events.append(Cue(s.tick, kind, place))
