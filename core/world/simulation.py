"""The game rules: movement, camera, interaction and dialogue, advanced one tick at a time.

Pure Python with no rendering, so a tick costs the same in lockstep and real time and
the same inputs always give the same state.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any

from core.game.pad import Button, PadState
from core.world.collision import CollisionWorld, Slide
from core.world.content import DialogueVariant, StartState, WorldSpec
from core.world.geometry2d import heading_of, heading_vector, wrap_degrees
from core.world.terrain import Terrain

STATE_FORMAT_VERSION = 1


@dataclass
class GameState:
    tick: int = 0
    x: float = 0.0
    y: float = 0.0
    z: float = 0.0
    facing: float = 0.0
    cam_yaw: float = 0.0
    cam_pitch: float = -12.0
    flags: int = 0
    dialogue_target: int = -1
    dialogue_variant: int = 0
    dialogue_line: int = 0
    held_buttons: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"format_version": STATE_FORMAT_VERSION, **asdict(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GameState:
        if data.get("format_version") != STATE_FORMAT_VERSION:
            raise ValueError(f"snapshot format {data.get('format_version')!r} is not {STATE_FORMAT_VERSION}")
        values: dict[str, Any] = {}  # each field's number, converted to its declared type
        for f in fields(cls):
            if f.name not in data:
                raise ValueError(f"snapshot lacks field {f.name!r}")
            value = data[f.name]
            expected = int if f.type in ("int", int) else float
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"snapshot field {f.name!r} must be a number")
            values[f.name] = expected(value)
        return cls(**values)


@dataclass(frozen=True)
class Speaker:
    """Anyone or anything the character can interact with."""

    id: str
    name: str
    x: float
    y: float
    radius: float
    dialogue: str
    verb: str = "Talk"


_BUTTON_BITS = {button: 1 << i for i, button in enumerate(Button)}


def button_mask(pad: PadState) -> int:
    mask = 0
    for button in pad.buttons:
        mask |= _BUTTON_BITS[button]
    return mask


class Simulation:
    def __init__(self, spec: WorldSpec, terrain: Terrain, collision: CollisionWorld,
                 speakers: list[Speaker]) -> None:
        self.spec = spec
        self.terrain = terrain
        self.collision = collision
        self.speakers = speakers
        self.flag_bits = {name: i for i, name in enumerate(spec.flags)}
        self.dt = 1.0 / spec.tick_hz
        self.state = GameState()
        # What the last tick's walk ran into, and how far the stick asked to go: for the world's sound
        # (a bump is heard when the character presses against something). Not game state: not saved.
        self.contact: Slide | None = None
        self.attempted_m = 0.0

    # -- start states -----------------------------------------------------------------
    def start_state(self, start: StartState) -> GameState:
        flags = 0
        for name in start.flags:
            flags |= 1 << self.flag_bits[name]
        x, y = start.pos
        return GameState(
            tick=0, x=x, y=y, z=self.terrain.ground_height(x, y), facing=start.facing,
            cam_yaw=start.facing if start.camera_yaw is None else start.camera_yaw,
            cam_pitch=start.camera_pitch, flags=flags,
        )

    def flag_set(self, name: str) -> bool:
        return bool(self.state.flags >> self.flag_bits[name] & 1)

    # -- the tick ---------------------------------------------------------------------
    def step(self, pad: PadState) -> None:
        s = self.state
        held = button_mask(pad)
        a_pressed = bool(held & _BUTTON_BITS[Button.A] and not s.held_buttons & _BUTTON_BITS[Button.A])
        self.contact, self.attempted_m = None, 0.0
        self._turn_camera(pad)
        if s.dialogue_target >= 0:
            if a_pressed:
                self._advance_dialogue()
        else:
            self._walk(pad)
            if a_pressed:
                self._try_interact()
        s.z = self.terrain.ground_height(s.x, s.y)
        s.held_buttons = held
        s.tick += 1

    def _deadzone(self, value: float) -> float:
        dz = self.spec.character.stick_deadzone
        if abs(value) <= dz:
            return 0.0
        return math.copysign((abs(value) - dz) / (1.0 - dz), value)

    def _turn_camera(self, pad: PadState) -> None:
        s, ch = self.state, self.spec.character
        s.cam_yaw = wrap_degrees(s.cam_yaw - self._deadzone(pad.right_x) * ch.camera_yaw_rate_deg * self.dt)
        pitch = s.cam_pitch + self._deadzone(pad.right_y) * ch.camera_pitch_rate_deg * self.dt
        s.cam_pitch = max(ch.pitch_min_deg, min(ch.pitch_max_deg, pitch))

    def _walk(self, pad: PadState) -> None:
        s, ch = self.state, self.spec.character
        magnitude = math.hypot(pad.left_x, pad.left_y)
        if magnitude <= ch.stick_deadzone:
            return
        scaled = (min(magnitude, 1.0) - ch.stick_deadzone) / (1.0 - ch.stick_deadzone)
        direction = wrap_degrees(s.cam_yaw + heading_of(pad.left_x, pad.left_y))
        speed = ch.run_speed if pad.pressed(Button.B) else ch.walk_speed
        ux, uy = heading_vector(direction)
        step = speed * scaled * self.dt
        slide = self.collision.slide(s.x, s.y, ux * step, uy * step, ch.radius, s.flags, self.terrain.on_deck)
        s.x, s.y = slide.x, slide.y
        self.contact, self.attempted_m = slide, step
        turn = wrap_degrees(direction - s.facing)
        limit = ch.turn_rate_deg * self.dt
        s.facing = wrap_degrees(s.facing + max(-limit, min(limit, turn)))

    # -- interaction ------------------------------------------------------------------
    def speaker_in_reach(self) -> int:
        """Index of the closest speaker the character is near and facing, or -1."""
        s, ch = self.state, self.spec.character
        fx, fy = heading_vector(s.facing)
        best, best_distance = -1, math.inf
        for index, speaker in enumerate(self.speakers):
            dx, dy = speaker.x - s.x, speaker.y - s.y
            distance = math.hypot(dx, dy)
            if distance - speaker.radius - ch.radius > ch.reach or distance < 1e-6:
                continue
            cos_angle = (dx * fx + dy * fy) / distance
            if cos_angle < math.cos(math.radians(ch.reach_angle_deg)):
                continue
            if distance < best_distance:
                best, best_distance = index, distance
        return best

    def _try_interact(self) -> None:
        target = self.speaker_in_reach()
        if target < 0:
            return
        variant = self._choose_variant(self.spec.dialogues[self.speakers[target].dialogue])
        s = self.state
        s.dialogue_target, s.dialogue_variant, s.dialogue_line = target, variant, 0

    def _choose_variant(self, variants: list[DialogueVariant]) -> int:
        for index, variant in enumerate(variants):
            has_all = all(self.flag_set(f) for f in variant.requires)
            has_none = not any(self.flag_set(f) for f in variant.requires_not)
            if has_all and has_none:
                return index
        return len(variants) - 1

    def current_dialogue(self) -> tuple[str, str] | None:
        """(speaker name, line text) while a dialogue is open."""
        s = self.state
        if s.dialogue_target < 0:
            return None
        speaker = self.speakers[s.dialogue_target]
        variant = self.spec.dialogues[speaker.dialogue][s.dialogue_variant]
        return speaker.name, variant.lines[s.dialogue_line]

    def _advance_dialogue(self) -> None:
        s = self.state
        speaker = self.speakers[s.dialogue_target]
        variant = self.spec.dialogues[speaker.dialogue][s.dialogue_variant]
        s.dialogue_line += 1
        if s.dialogue_line < len(variant.lines):
            return
        for name in variant.set_flags:
            s.flags |= 1 << self.flag_bits[name]
        for name in variant.clear_flags:
            s.flags &= ~(1 << self.flag_bits[name])
        s.dialogue_target, s.dialogue_variant, s.dialogue_line = -1, 0, 0
