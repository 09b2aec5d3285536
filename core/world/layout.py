"""Turns a validated world file into what the rules need: obstacles, decks and speakers.

Both the simulation and the renderer read the same expanded layout, so what blocks the
character is exactly what the camera shows (except invisible walls, on purpose).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
from dataclasses import dataclass
from typing import Literal

from core.world.collision import CollisionWorld, Obstacle
from core.world.content import Bridge, ClockTower, Fountain, Gate, Lighthouse, Pier, Prop, Scatter, WorldSpec
from core.world.geometry2d import distance_to_polyline, heading_vector, segment_rect
from core.world.simulation import Speaker
from core.world.terrain import Deck, Terrain

SEGMENT_THICKNESS = {"fence": 0.15, "hedge": 0.9, "low_wall": 0.5, "invisible_wall": 0.4, "railing": 0.15}
SEGMENT_HEIGHT = {"fence": 1.1, "hedge": 1.4, "low_wall": 0.8, "invisible_wall": 3.0, "railing": 1.0}
_PROP_CIRCLES = {"lamp": 0.15, "tree": 0.4, "pine": 0.4, "rock": 0.8, "cone": 0.22, "barrel": 0.35}
_PROP_RECTS = {"bench": (0.9, 0.3), "crate": (0.5, 0.5), "flowerbed": (1.2, 0.6), "crane": (1.2, 1.2)}
_INTERACTABLE_RADIUS = {"item": 0.3, "door": 0.6, "sign": 0.5, "lever": 0.3, "mailbox": 0.3,
                        "switch": 0.3, "chest": 0.5}
_VERBS = {"item": "Pick up", "door": "Open", "sign": "Read", "lever": "Pull", "mailbox": "Check",
          "switch": "Turn", "chest": "Open"}
_INTERACTABLE_BLOCKS = {"sign", "lever", "mailbox", "switch", "chest"}
# What a bump against each kind of obstacle sounds of (core/world/sound/banks_bumps.py); anything else is stone.
_MATERIALS = {"fence": "wood", "hedge": "foliage", "invisible_wall": "invisible", "railing": "metal",
              "world_edge": "invisible", "bench": "wood", "lamp": "metal", "tree": "wood", "pine": "wood",
              "crate": "wood", "cone": "wood", "barrel": "wood", "flowerbed": "foliage", "crane": "metal",
              "bridge_railing": "wood", "sign": "wood", "lever": "metal", "mailbox": "metal", "switch": "metal",
              "chest": "wood", "npc": "person", "gatekeeper": "wood"}
NPC_RADIUS = 0.35


@dataclass(frozen=True)
class Layout:
    terrain: Terrain
    collision: CollisionWorld
    speakers: list[Speaker]
    props: list[Prop]


def expand_props(spec: WorldSpec) -> list[Prop]:
    """Props written out one by one, with every scatter replaced by its seeded placements."""
    props: list[Prop] = []
    for entry in spec.props:
        if isinstance(entry, Prop):
            props.append(entry)
        else:
            props.extend(_scatter(spec, entry))
    return props


def _scatter(spec: WorldSpec, scatter: Scatter) -> list[Prop]:
    rng = random.Random(scatter.seed)
    x0, y0, x1, y1 = scatter.area
    placed: list[Prop] = []
    for _ in range(scatter.count * 30):
        if len(placed) >= scatter.count:
            break
        x, y = rng.uniform(x0, x1), rng.uniform(y0, y1)
        if any(a <= x <= c and b <= y <= d for a, b, c, d in scatter.keep_clear):
            continue
        if any(distance_to_polyline(x, y, road.points) < road.width / 2 + 2.0 for road in spec.roads):
            continue
        if any(math.hypot(x - p.pos[0], y - p.pos[1]) < scatter.min_spacing for p in placed):
            continue
        kind = scatter.kinds[rng.randrange(len(scatter.kinds))]
        placed.append(Prop(type=kind, pos=(x, y), rot=rng.uniform(0, 360), scale=rng.uniform(0.8, 1.3)))
    return placed


def _rect(name: str, cx: float, cy: float, hx: float, hy: float, angle: float,
          kind: Literal["solid", "water"] = "solid", open_flag: int | None = None, material: str = "stone") -> Obstacle:
    return Obstacle(name=name, cx=cx, cy=cy, half_x=hx, half_y=hy, angle_deg=angle, kind=kind, open_flag=open_flag,
                    material=material)


def _segment_obstacles(name: str, points: list[tuple[float, float]], thickness: float,
                       kind: Literal["solid", "water"] = "solid", extend: float = 0.0) -> list[Obstacle]:
    out: list[Obstacle] = []
    for a, b in itertools.pairwise(points):
        cx, cy, half_length, half_thickness, angle = segment_rect(a, b, thickness)
        out.append(_rect(name, cx, cy, half_length + extend, half_thickness, angle, kind=kind))
    return out


def deck_for(start: tuple[float, float], end: tuple[float, float], width: float, z: float) -> Deck:
    cx, cy, half_length, half_width, angle = segment_rect(start, end, width)
    return Deck(cx, cy, half_length, half_width, angle, z)


def deck_height(terrain: Terrain, structure: Bridge | Pier) -> float:
    ends = [terrain.terrain_height(*structure.start), terrain.terrain_height(*structure.end), 0.0]
    return max(ends) + structure.deck_height


def _structure_obstacles(structure: object) -> list[Obstacle]:
    if isinstance(structure, ClockTower):
        half = structure.size / 2
        return [_rect("clock_tower", *structure.pos, half, half, 0.0)]
    if isinstance(structure, Fountain):
        return [Obstacle("fountain", *structure.pos, radius=structure.radius)]
    if isinstance(structure, Lighthouse):
        return [Obstacle("lighthouse", *structure.pos, radius=2.2)]
    if isinstance(structure, Gate):
        ux, uy = heading_vector(structure.rot - 90.0)  # along the gate's width
        offset = structure.width / 2 + 0.6
        return [_rect("gate_pillar", structure.pos[0] + ux * side * offset, structure.pos[1] + uy * side * offset,
                      0.6, 0.6, structure.rot) for side in (-1, 1)]
    if isinstance(structure, (Bridge, Pier)):
        cx, cy, half_length, _, angle = segment_rect(structure.start, structure.end, structure.width)
        nx, ny = -math.sin(math.radians(angle)), math.cos(math.radians(angle))
        rails = [_rect("railing", cx + nx * side * structure.width / 2, cy + ny * side * structure.width / 2,
                       half_length, 0.08, angle, material=_MATERIALS["bridge_railing"]) for side in (-1, 1)]
        if isinstance(structure, Pier):
            ex, ey = structure.end
            rails.append(_rect("railing", ex, ey, 0.08, structure.width / 2, angle,
                               material=_MATERIALS["bridge_railing"]))
        return rails
    raise TypeError(f"unknown structure {structure!r}")


def _with_material(obstacle: Obstacle, gatekeepers: set[str]) -> Obstacle:
    if obstacle.material != "stone":  # set where it was made
        return obstacle
    if obstacle.kind == "water":
        return dataclasses.replace(obstacle, material="water")
    name = "gatekeeper" if obstacle.name in gatekeepers else obstacle.name
    return dataclasses.replace(obstacle, material=_MATERIALS.get(name, "stone"))


def build_layout(spec: WorldSpec) -> Layout:
    terrain = Terrain(spec)
    obstacles: list[Obstacle] = []
    for building in spec.buildings:
        w, d, _ = building.size
        obstacles.append(_rect(building.id, *building.pos, w / 2, d / 2, building.rot))
    for segment in spec.segments:
        thickness = SEGMENT_THICKNESS[segment.type]
        obstacles.extend(_segment_obstacles(segment.type, segment.points, thickness, extend=thickness / 2))
    props = expand_props(spec)
    for prop in props:
        if prop.type in _PROP_CIRCLES:
            obstacles.append(Obstacle(prop.type, *prop.pos, radius=_PROP_CIRCLES[prop.type] * prop.scale))
        else:
            hx, hy = _PROP_RECTS[prop.type]
            obstacles.append(_rect(prop.type, *prop.pos, hx * prop.scale, hy * prop.scale, prop.rot))
    for structure in spec.structures:
        if isinstance(structure, (Bridge, Pier)):  # walkable decks over the water
            terrain.decks.append(deck_for(structure.start, structure.end, structure.width,
                                          deck_height(terrain, structure)))
        obstacles.extend(_structure_obstacles(structure))
    flag_bits = {name: i for i, name in enumerate(spec.flags)}
    for keeper in spec.gatekeepers:
        obstacles.append(_rect(keeper.id, *keeper.pos, keeper.size[0] / 2, keeper.size[1] / 2, keeper.rot,
                               open_flag=flag_bits[keeper.open_flag]))
    if spec.stream is not None:
        obstacles.extend(_segment_obstacles("stream", spec.stream.points, spec.stream.width, "water",
                                            extend=spec.stream.width / 2))
    x0, y0, x1, y1 = spec.bounds
    if spec.sea is not None:
        far = max(abs(x1), spec.sea.shore_x) + 60.0
        obstacles.append(_rect("sea", (spec.sea.shore_x + 1.0 + far) / 2, (y0 + y1) / 2,
                               (far - spec.sea.shore_x - 1.0) / 2, (y1 - y0) / 2 + 10, 0.0, kind="water"))
    cx, cy, hx, hy = (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0) / 2, (y1 - y0) / 2
    obstacles += [
        _rect("world_edge", cx, y1 + 1.0, hx + 2, 1.0, 0.0), _rect("world_edge", cx, y0 - 1.0, hx + 2, 1.0, 0.0),
        _rect("world_edge", x0 - 1.0, cy, 1.0, hy + 2, 0.0), _rect("world_edge", x1 + 1.0, cy, 1.0, hy + 2, 0.0),
    ]
    speakers = [Speaker(n.id, n.name, *n.pos, NPC_RADIUS, n.dialogue) for n in spec.npcs]
    obstacles += [Obstacle(n.id, *n.pos, radius=NPC_RADIUS, material=_MATERIALS["npc"]) for n in spec.npcs]
    for item in spec.interactables:
        radius = _INTERACTABLE_RADIUS[item.kind]
        speakers.append(Speaker(item.id, item.name, *item.pos, radius, item.dialogue, _VERBS[item.kind]))
        if item.kind in _INTERACTABLE_BLOCKS:
            obstacles.append(Obstacle(item.id, *item.pos, radius=radius, material=_MATERIALS[item.kind]))
    obstacles = [_with_material(o, {k.id for k in spec.gatekeepers}) for o in obstacles]
    return Layout(terrain=terrain, collision=CollisionWorld(obstacles), speakers=speakers, props=props)
