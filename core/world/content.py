"""The world file schema (assets/worlds/*/world.yaml), validated with clear errors.

See docs/world-format.md. Every coordinate is metres in the world frame: x east,
y north, z up. Angles are degrees; a heading of 0 faces north (+y) and positive
headings turn counter-clockwise (Panda3D's H).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from core.world.sound_spec import SoundSpec, sound_problems
from core.yaml_file import LocatedProblems, Location, explain, read_yaml

WORLD_FORMAT_VERSION = 1
MAX_FLAGS = 64

Vec2 = tuple[float, float]
Vec3 = tuple[float, float, float]
Color = tuple[float, float, float]


class WorldFileError(ValueError):
    """A world file could not be read or does not match the schema."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RenderSpec(_Model):
    fov_deg: float = Field(default=70.0, gt=20, lt=120)
    sky_top: Color = (0.35, 0.55, 0.9)
    sky_horizon: Color = (0.78, 0.86, 0.95)
    fog_color: Color = (0.78, 0.86, 0.95)
    fog_start: float = Field(default=40.0, ge=0)
    fog_end: float = Field(default=230.0, gt=0)
    sun_direction: Vec3 = (0.4, 0.3, -0.85)
    sun_strength: float = Field(default=0.75, ge=0, le=2)
    ambient: float = Field(default=0.45, ge=0, le=2)


class CharacterSpec(_Model):
    radius: float = Field(default=0.35, gt=0, le=1)
    walk_speed: float = Field(default=4.0, gt=0)
    run_speed: float = Field(default=6.5, gt=0)
    turn_rate_deg: float = Field(default=900.0, gt=0)
    reach: float = Field(default=1.6, gt=0)
    reach_angle_deg: float = Field(default=55.0, gt=0, le=180)
    camera_distance: float = Field(default=5.5, gt=0)
    camera_target_height: float = Field(default=1.5, ge=0)
    camera_yaw_rate_deg: float = Field(default=120.0, gt=0)
    camera_pitch_rate_deg: float = Field(default=60.0, gt=0)
    pitch_min_deg: float = -50.0
    pitch_max_deg: float = 15.0
    stick_deadzone: float = Field(default=0.15, ge=0, lt=1)


class Hill(_Model):
    center: Vec2
    radius: float = Field(gt=0)
    height: float


class TerrainSpec(_Model):
    extent: float = Field(default=140.0, gt=0, description="half-size of the rendered ground square")
    spacing: float = Field(default=2.0, gt=0.25)
    hills: list[Hill] = []
    grass_color: Color = (0.42, 0.62, 0.3)


class StreamSpec(_Model):
    points: list[Vec2] = Field(min_length=2)
    width: float = Field(gt=0)
    depth: float = Field(default=1.5, gt=0)
    bank_width: float = Field(default=3.0, ge=0)


class SeaSpec(_Model):
    shore_x: float
    level: float = -0.6


class Road(_Model):
    name: str
    points: list[Vec2] = Field(min_length=2)
    width: float = Field(gt=0)
    surface: Literal["asphalt", "cobble", "dirt"] = "cobble"


class Plaza(_Model):
    name: str
    center: Vec2
    radius: float = Field(gt=0)
    surface: Literal["asphalt", "cobble", "dirt"] = "cobble"


RoofShape = Literal["gable", "hip", "pyramid", "flat", "dome"]


class Roof(_Model):
    shape: RoofShape
    color: Color
    height: float = Field(default=2.5, ge=0)


class Sign(_Model):
    text: str = Field(min_length=1, max_length=16)
    color: Color = (0.15, 0.2, 0.5)
    text_color: Color = (1.0, 1.0, 1.0)


class Building(_Model):
    id: str
    name: str
    pos: Vec2
    size: Vec3
    rot: float = 0.0
    color: Color
    roof: Roof
    sign: Sign | None = None
    door: bool = True
    windows: bool = True


class Segment(_Model):
    type: Literal["fence", "hedge", "low_wall", "invisible_wall", "railing"]
    points: list[Vec2] = Field(min_length=2)
    height: float | None = None


class Prop(_Model):
    type: Literal["bench", "lamp", "tree", "pine", "rock", "crate", "cone", "barrel", "flowerbed", "crane"]
    pos: Vec2
    rot: float = 0.0
    scale: float = Field(default=1.0, gt=0)


class Scatter(_Model):
    type: Literal["scatter"]
    kinds: list[Literal["tree", "pine", "rock", "flowerbed"]] = Field(min_length=1)
    area: tuple[float, float, float, float]
    count: int = Field(ge=1, le=500)
    seed: int = 0
    min_spacing: float = Field(default=4.0, gt=0)
    keep_clear: list[tuple[float, float, float, float]] = []


class ClockTower(_Model):
    type: Literal["clock_tower"]
    pos: Vec2
    size: float = 6.0
    height: float = 22.0
    color: Color = (0.75, 0.7, 0.62)
    roof_color: Color = (0.2, 0.35, 0.3)


class Fountain(_Model):
    type: Literal["fountain"]
    pos: Vec2
    radius: float = 4.0


class Bridge(_Model):
    type: Literal["bridge"]
    start: Vec2
    end: Vec2
    width: float = 4.0
    deck_height: float = 0.6
    color: Color = (0.55, 0.4, 0.28)


class Pier(_Model):
    type: Literal["pier"]
    start: Vec2
    end: Vec2
    width: float = 4.0
    deck_height: float = 0.4


class Gate(_Model):
    type: Literal["gate"]
    pos: Vec2
    rot: float = 0.0
    width: float = 8.0
    height: float = 7.0
    text: str = ""
    color: Color = (0.6, 0.55, 0.5)


class Lighthouse(_Model):
    type: Literal["lighthouse"]
    pos: Vec2
    height: float = 16.0


Structure = Annotated[ClockTower | Fountain | Bridge | Pier | Gate | Lighthouse, Field(discriminator="type")]


class Figure(_Model):
    body: Color
    legs: Color = (0.2, 0.2, 0.3)
    skin: Color = (0.93, 0.78, 0.65)
    hat: Literal["none", "cap", "cone", "top", "bun", "helmet", "wide"] = "none"
    hat_color: Color = (0.2, 0.2, 0.2)
    height: float = Field(default=1.75, gt=0.8, lt=2.6)
    build: float = Field(default=1.0, gt=0.5, lt=2.0)
    lower: Literal["pants", "skirt", "robe"] = "pants"
    accessory: Literal["none", "backpack", "scarf", "apron", "cane"] = "none"
    accessory_color: Color = (0.6, 0.2, 0.2)


class Npc(_Model):
    id: str
    name: str
    pos: Vec2
    facing: float = 0.0
    figure: Figure
    dialogue: str


class Interactable(_Model):
    id: str
    kind: Literal["item", "door", "sign", "lever", "mailbox", "switch", "chest"]
    name: str
    pos: Vec2
    facing: float = 0.0
    dialogue: str
    # The visual state flips when this flag is set (item gone, door open, lever pulled).
    state_flag: str | None = None
    color: Color = (0.8, 0.7, 0.2)


class DialogueVariant(_Model):
    requires: list[str] = []
    requires_not: list[str] = []
    lines: list[Annotated[str, Field(min_length=1, max_length=160)]] = Field(min_length=1)
    set_flags: list[str] = []
    clear_flags: list[str] = []


class StartState(_Model):
    pos: Vec2
    facing: float = 0.0
    camera_yaw: float | None = None
    camera_pitch: float = -12.0
    flags: list[str] = []


class Gatekeeper(_Model):
    """An obstacle that exists until a flag is set (a closed gate, a locked door)."""

    id: str
    pos: Vec2
    size: Vec2
    rot: float = 0.0
    open_flag: str
    color: Color = (0.35, 0.25, 0.18)
    height: float = 2.0


class WorldSpec(_Model):
    format_version: Literal[1]
    name: str
    map_id: int = Field(ge=0, lt=2**32)
    tick_hz: float = Field(default=30.0, gt=1, le=240)
    bounds: tuple[float, float, float, float]
    render: RenderSpec = RenderSpec()
    character: CharacterSpec = CharacterSpec()
    terrain: TerrainSpec = TerrainSpec()
    stream: StreamSpec | None = None
    sea: SeaSpec | None = None
    roads: list[Road] = []
    plazas: list[Plaza] = []
    buildings: list[Building] = []
    segments: list[Segment] = []
    props: list[Prop | Scatter] = []
    structures: list[Structure] = []
    gatekeepers: list[Gatekeeper] = []
    npcs: list[Npc] = []
    interactables: list[Interactable] = []
    dialogues: dict[str, list[DialogueVariant]]
    flags: list[str] = Field(max_length=MAX_FLAGS)
    start_states: dict[str, StartState] = Field(min_length=1)
    sound: SoundSpec = SoundSpec()

    @field_validator("flags")
    @classmethod
    def _unique_flags(cls, flags: list[str]) -> list[str]:
        if len(set(flags)) != len(flags):
            raise ValueError("flag names must be unique")
        return flags

    @model_validator(mode="after")
    def _references_resolve(self) -> WorldSpec:
        """Whole-file checks, each problem with the field it is about (so it is reported at its line)."""
        known_flags = set(self.flags)
        problems: list[tuple[Location, str]] = []
        for name, variants in self.dialogues.items():
            for i, variant in enumerate(variants):
                for flag in [*variant.requires, *variant.requires_not, *variant.set_flags, *variant.clear_flags]:
                    if flag not in known_flags:
                        problems.append((("dialogues", name, i), f"dialogue {name!r} variant {i} names unknown "
                                                                 f"flag {flag!r}"))
        holders: list[tuple[str, list[Npc] | list[Interactable]]] = [("npcs", self.npcs),
                                                                     ("interactables", self.interactables)]
        for group, members in holders:
            for i, holder in enumerate(members):
                if holder.dialogue not in self.dialogues:
                    problems.append(((group, i, "dialogue"), f"{holder.id!r} uses unknown dialogue "
                                                             f"{holder.dialogue!r}"))
        for i, item in enumerate(self.interactables):
            if item.state_flag is not None and item.state_flag not in known_flags:
                problems.append((("interactables", i, "state_flag"), f"interactable {item.id!r} names unknown "
                                                                     f"state_flag {item.state_flag!r}"))
        for i, keeper in enumerate(self.gatekeepers):
            if keeper.open_flag not in known_flags:
                problems.append((("gatekeepers", i, "open_flag"), f"gatekeeper {keeper.id!r} names unknown "
                                                                  f"open_flag {keeper.open_flag!r}"))
        for name, start in self.start_states.items():
            unknown = [f for f in start.flags if f not in known_flags]
            problems.extend((("start_states", name, "flags"), f"start state {name!r} names unknown flag {f!r}")
                            for f in unknown)
        ids = [b.id for b in self.buildings] + [n.id for n in self.npcs] + [i.id for i in self.interactables]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            problems.append(((), f"duplicate ids: {duplicates}"))
        problems += sound_problems(self.sound, self.bounds, self.tick_hz, [n.id for n in self.npcs],
                                   self.stream is not None, self.sea is not None)
        if problems:
            raise LocatedProblems(problems)
        return self


def load_world(path: Path) -> WorldSpec:
    """Read and validate a world file; every problem is reported with the file name."""
    try:
        data, root = read_yaml(path, "world file")
    except ValueError as exc:
        raise WorldFileError(str(exc)) from None
    if not isinstance(data, dict):
        raise WorldFileError(f"{path}:1: a world file must hold a mapping (format_version, name, terrain, ...)")
    try:
        return WorldSpec.model_validate(data)
    except ValidationError as exc:
        raise WorldFileError(explain(path, root, exc, f"world file (format {WORLD_FORMAT_VERSION})")) from None
