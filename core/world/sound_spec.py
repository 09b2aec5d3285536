"""The world file's `sound:` section (docs/world-format.md, "Sound"), validated like the rest of the file.

Checks that need the whole world (a source inside the map, a voice for an NPC that exists, a sample rate
that divides into ticks) are in `sound_problems`, which WorldSpec runs with the located problems of its own.
"""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from core.yaml_file import Location

Surface = Literal["grass", "asphalt", "cobble", "dirt", "sand", "wood"]
SURFACES: tuple[str, ...] = get_args(Surface)
Vec2 = tuple[float, float]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FootstepTimbre(_Model):
    """How one step on a surface sounds: a burst of band-limited noise, grainy or smooth, and a knock."""

    noise_band: tuple[float, float] = Field(description="Hz: the scuff's noise band")
    grain: float = Field(default=0.3, ge=0, le=1, description="0 a smooth scuff, 1 many tiny crunches (grass, sand)")
    knock_hz: float = Field(default=0.0, ge=0, le=4000, description="a hard surface's knock; 0 for none")
    decay_ms: float = Field(default=70.0, gt=5, le=400)
    gain: float = Field(default=0.7, ge=0, le=2)

    @model_validator(mode="after")
    def _band_order(self) -> FootstepTimbre:
        low, high = self.noise_band
        if not 20 <= low < high <= 11000:
            raise ValueError(f"noise_band must be two frequencies 20 <= low < high <= 11000 Hz, got {self.noise_band}")
        return self


DEFAULT_TIMBRES: dict[str, FootstepTimbre] = {
    "grass": FootstepTimbre(noise_band=(700, 5000), grain=0.85, decay_ms=85, gain=0.55),
    "asphalt": FootstepTimbre(noise_band=(1500, 7000), grain=0.05, knock_hz=900, decay_ms=40, gain=0.75),
    "cobble": FootstepTimbre(noise_band=(1000, 5500), grain=0.35, knock_hz=1500, decay_ms=55, gain=0.85),
    "dirt": FootstepTimbre(noise_band=(400, 2800), grain=0.6, decay_ms=75, gain=0.6),
    "sand": FootstepTimbre(noise_band=(600, 3500), grain=1.0, decay_ms=130, gain=0.5),
    "wood": FootstepTimbre(noise_band=(600, 3000), grain=0.1, knock_hz=260, decay_ms=110, gain=0.9),
}


class FootstepSpec(_Model):
    stride_m: float = Field(default=1.1, gt=0.2, le=3, description="metres walked per footfall")
    gain: float = Field(default=1.0, ge=0, le=4)
    surfaces: dict[Surface, FootstepTimbre] = {}  # overrides DEFAULT_TIMBRES, surface by surface

    def timbre(self, surface: str) -> FootstepTimbre:
        for name, timbre in self.surfaces.items():
            if name == surface:
                return timbre
        return DEFAULT_TIMBRES[surface]


class Level(_Model):
    gain: float = Field(default=1.0, ge=0, le=4)


class Voice(_Model):
    """An NPC's voice; by default derived from its figure (taller: lower), written here to override."""

    pitch_hz: float | None = Field(default=None, ge=60, le=500)
    formant_scale: float | None = Field(default=None, ge=0.6, le=1.6, description=">1: a smaller vocal tract, brighter")


class Voices(_Model):
    gain: float = Field(default=1.0, ge=0, le=4)
    npcs: dict[str, Voice] = {}


class _Placed(_Model):
    """Where a source is: exactly one of a point, a polyline, a rectangle, or a shape of the world."""

    id: str
    pos: Vec2 | None = None
    points: list[Vec2] | None = Field(default=None, min_length=2)
    area: tuple[float, float, float, float] | None = None
    follows: Literal["stream", "sea"] | None = None
    height: float = Field(default=1.0, ge=0, le=100, description="metres above the ground")
    gain: float = Field(default=1.0, ge=0, le=4)
    reference_m: float = Field(default=5.0, gt=0, le=200, description="full level within this distance")

    @model_validator(mode="after")
    def _one_shape(self) -> _Placed:
        given = [name for name in ("pos", "points", "area", "follows") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(f"a sound source needs exactly one of pos, points, area or follows; got {given or 'none'}")
        if self.area is not None and not (self.area[0] < self.area[2] and self.area[1] < self.area[3]):
            raise ValueError(f"area must be [x0, y0, x1, y1] with x0 < x1 and y0 < y1, got {list(self.area)}")
        return self


class AmbientSource(_Placed):
    kind: Literal["water", "surf", "fountain", "gulls", "chatter"]


class BellSource(_Placed):
    kind: Literal["bell"]
    period_s: float = Field(default=20.0, ge=2, le=3600,
                            description="game seconds between the first strokes of two rings")
    strikes: int = Field(default=2, ge=1, le=12)
    interval_s: float = Field(default=1.6, gt=0.2, le=10, description="between strokes of one ring")
    pitch_hz: float = Field(default=392.0, ge=150, le=2000,
                            description="the strike note; its hum sounds an octave below")


Source = Annotated[AmbientSource | BellSource, Field(discriminator="kind")]


class SoundSpec(_Model):
    seed: int = Field(default=0, ge=0, lt=2**63)
    rate: int = Field(default=24000, ge=22050, le=48000, description="samples per second")
    gain: float = Field(default=1.0, ge=0, le=4, description="the master level")
    ring_seconds: float = Field(default=30.0, ge=2, le=600, description="how much recent sound the audio ring keeps")
    footsteps: FootstepSpec = FootstepSpec()
    bumps: Level = Level()
    cues: Level = Level()
    voices: Voices = Voices()
    sources: list[Source] = []


def sound_problems(sound: SoundSpec, bounds: tuple[float, float, float, float], tick_hz: float,
                   npc_ids: list[str], has_stream: bool, has_sea: bool) -> list[tuple[Location, str]]:
    """Everything wrong with the section given the rest of the world, each with the field it is about."""
    problems: list[tuple[Location, str]] = []
    per_tick = sound.rate / tick_hz
    if abs(per_tick - round(per_tick)) > 1e-9:
        problems.append((("sound", "rate"), f"{sound.rate} samples/s do not divide into ticks of {tick_hz:g}/s; "
                                            f"pick a rate that is a multiple of the tick rate (e.g. 24000 at 30)"))
    for npc in sound.voices.npcs:
        if npc not in npc_ids:
            problems.append((("sound", "voices", "npcs", npc), f"no NPC has the id {npc!r}; NPCs: {npc_ids}"))
    x0, y0, x1, y1 = bounds
    seen: set[str] = set()
    for index, source in enumerate(sound.sources):
        where: Location = ("sound", "sources", index)
        if source.id in seen:
            problems.append(((*where, "id"), f"two sound sources have the id {source.id!r}"))
        seen.add(source.id)
        if (source.follows == "stream" and not has_stream) or (source.follows == "sea" and not has_sea):
            problems.append(((*where, "follows"), f"this world has no {source.follows} to follow"))
        shape = {"pos": [source.pos] if source.pos else [], "points": source.points or [],
                 "area": [source.area[:2], source.area[2:]] if source.area else []}
        for field, points in shape.items():
            outside = [p for p in points if not (x0 <= p[0] <= x1 and y0 <= p[1] <= y1)]
            if outside:
                problems.append(((*where, field), f"source {source.id!r} is outside the map: {list(outside[0])} "
                                                  f"is not within bounds {list(bounds)}"))
    return problems
