"""The town as mesh groups: every piece of static geometry, grouped by texture, map chunk and
visibility condition (flag-dependent pieces such as an open or closed gate).

Pure numpy; the renderer turns each group into one Panda3D node.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from core.world import textures
from core.world.content import (
    Bridge,
    Building,
    ClockTower,
    Fountain,
    Gate,
    Gatekeeper,
    Interactable,
    Lighthouse,
    Pier,
    Prop,
    Segment,
    WorldSpec,
)
from core.world.figures import build_figure
from core.world.geometry2d import heading_vector, segment_rect
from core.world.layout import SEGMENT_HEIGHT, Layout, deck_height
from core.world.meshes import MeshBuilder, ribbon, rotation_z

CHUNK = 40.0
_SURFACE_COLORS = {"asphalt": (0.42, 0.42, 0.45), "cobble": (0.78, 0.72, 0.62), "dirt": (0.66, 0.52, 0.36)}
WATER = (0.22, 0.45, 0.68)


class GroupKey(NamedTuple):
    texture: str
    chunk: tuple[int, int]
    condition: tuple[int, bool] | None  # (flag bit, shown when the flag equals this)


@dataclass
class SceneData:
    groups: dict[GroupKey, MeshBuilder] = field(default_factory=dict[GroupKey, MeshBuilder])
    images: dict[str, np.ndarray] = field(default_factory=dict[str, np.ndarray])
    unlit: set[str] = field(default_factory=set[str])


class SceneBuilder:
    def __init__(self, spec: WorldSpec, layout: Layout) -> None:
        self.spec = spec
        self.layout = layout
        self.terrain = layout.terrain
        self.data = SceneData()
        for name, make in textures.NAMED.items():
            self.data.images[name] = make()
        self.flag_bits = {name: i for i, name in enumerate(spec.flags)}

    def mesh(self, texture: str, x: float, y: float, condition: tuple[int, bool] | None = None) -> MeshBuilder:
        key = GroupKey(texture, (math.floor(x / CHUNK), math.floor(y / CHUNK)), condition)
        return self.data.groups.setdefault(key, MeshBuilder())

    def ground(self, x: float, y: float) -> float:
        return self.terrain.terrain_height(x, y)

    def build(self) -> SceneData:
        self._terrain()
        self._water()
        for road in self.spec.roads:
            mid = road.points[len(road.points) // 2]
            ribbon(self.mesh(road.surface, *mid), road.points, road.width, self.ground,
                   _SURFACE_COLORS[road.surface], lift=0.05)
        for plaza in self.spec.plazas:
            self._plaza(plaza.center, plaza.radius, plaza.surface)
        for building in self.spec.buildings:
            self._building(building)
        for segment in self.spec.segments:
            self._segment(segment)
        for prop in self.layout.props:
            self._prop(prop)
        for structure in self.spec.structures:
            self._structure(structure)
        for keeper in self.spec.gatekeepers:
            self._gatekeeper(keeper)
        for npc in self.spec.npcs:
            x, y = npc.pos
            build_figure(self.mesh("plain", x, y), npc.figure, x, y, self.terrain.ground_height(x, y), npc.facing)
        for item in self.spec.interactables:
            self._interactable(item)
        return self.data

    # -- ground and water -------------------------------------------------------------
    def _terrain(self) -> None:
        t = self.terrain
        n = t.count
        block = 16
        grass = np.array(self.spec.terrain.grass_color)
        sand = np.array([0.76, 0.70, 0.52])
        for r0 in range(0, n - 1, block):
            for c0 in range(0, n - 1, block):
                r1, c1 = min(r0 + block, n - 1), min(c0 + block, n - 1)
                xs = t.xs[r0:r1 + 1, c0:c1 + 1]
                ys = t.ys[r0:r1 + 1, c0:c1 + 1]
                zs = t.heights[r0:r1 + 1, c0:c1 + 1]
                positions = np.stack([xs, ys, zs], axis=-1).reshape(-1, 3)
                gy, gx = np.gradient(zs, t.spacing)
                normals = np.stack([-gx, -gy, np.ones_like(zs)], axis=-1).reshape(-1, 3)
                normals /= np.linalg.norm(normals, axis=1, keepdims=True)
                low = np.clip(-zs.reshape(-1) / 0.8, 0, 1)[:, None]
                variation = 0.94 + 0.06 * np.sin(positions[:, :1] * 0.13) * np.cos(positions[:, 1:2] * 0.11)
                colors = (grass * (1 - low) + sand * low) * variation
                rows, cols = r1 - r0 + 1, c1 - c0 + 1
                tris: list[list[int]] = []
                for r in range(rows - 1):
                    for c in range(cols - 1):
                        a = r * cols + c
                        tris += [[a, a + 1, a + cols + 1], [a, a + cols + 1, a + cols]]
                cx, cy = float(xs.mean()), float(ys.mean())
                self.mesh("grass", cx, cy).add(positions, normals, colors, positions[:, :2] / 6.0, np.array(tris))

    def _water(self) -> None:
        if self.spec.stream is not None:
            stream = self.spec.stream
            mid = stream.points[len(stream.points) // 2]
            ribbon(self.mesh("plain", *mid), stream.points, stream.width + 2.0, lambda x, y: -0.55,
                   WATER, lift=0.0, sample=8.0)
        if self.spec.sea is not None:
            x0 = self.spec.sea.shore_x - 6
            level = self.spec.sea.level
            for y0 in range(-300, 300, 60):
                for xa in range(int(x0), int(x0) + 300, 60):
                    self.mesh("plain", xa + 30, y0 + 30).quad(
                        [(xa, y0, level), (xa + 60, y0, level), (xa + 60, y0 + 60, level), (xa, y0 + 60, level)],
                        (0.2, 0.42, 0.66))

    def _plaza(self, center: tuple[float, float], radius: float, surface: str) -> None:
        angles = np.linspace(0, 2 * math.pi, 33)[:-1]
        mesh = self.mesh(surface, *center)
        for r_in, r_out in ((0.0, radius * 0.5), (radius * 0.5, radius)):
            inner = np.column_stack([center[0] + np.cos(angles) * r_in, center[1] + np.sin(angles) * r_in])
            outer = np.column_stack([center[0] + np.cos(angles) * r_out, center[1] + np.sin(angles) * r_out])
            if r_in == 0.0:
                rim = np.column_stack([outer, [self.ground(x, y) + 0.07 for x, y in outer]])
                mesh.polygon_fan((*center, self.ground(*center) + 0.07), rim, _SURFACE_COLORS[surface], uv_scale=0.25)
                continue
            for i in range(len(angles)):
                j = (i + 1) % len(angles)
                corners = [(*outer[i], 0), (*outer[j], 0), (*inner[j], 0), (*inner[i], 0)]
                corners = [(x, y, self.ground(x, y) + 0.07) for x, y, _ in corners]
                mesh.quad(corners, _SURFACE_COLORS[surface], uvs=[(x / 4, y / 4) for x, y, _ in corners])

    # -- buildings --------------------------------------------------------------------
    def _building(self, b: Building) -> None:
        x, y = b.pos
        w, d, h = b.size
        rot = rotation_z(b.rot)
        corners = [rot @ np.array([sx * w / 2, sy * d / 2, 0]) + np.array([x, y, 0])
                   for sx in (-1, 1) for sy in (-1, 1)]
        heights = [self.ground(c[0], c[1]) for c in corners]
        base_z = max(heights)
        sink = base_z - min(heights) + 0.5
        walls = self.mesh("facade" if b.windows else "plain", x, y)
        walls.box((x, y, base_z - sink), (w, d, h + sink), b.rot, b.color, uv_scale=(3.0, 3.0))
        self.mesh("plain", x, y).roof(b.roof.shape, (x, y, base_z + h), w, d, b.roof.height, b.rot, b.roof.color)
        front = rot @ np.array([0, d / 2, 0])
        fx, fy = x + front[0], y + front[1]
        if b.door:
            self._wall_panel("plain", (fx, fy, base_z), b.rot, 1.6, 2.5, (0.32, 0.2, 0.12), 0.03)
        if b.sign is not None:
            sign_w = min(w * 0.8, 1.6 + 0.75 * len(b.sign.text))
            key = f"sign:{b.id}"
            self.data.images[key] = textures.sign(b.sign.text, b.sign.color, b.sign.text_color)
            self._wall_panel(key, (fx, fy, base_z + min(h - 1.6, 3.0)), b.rot, sign_w, sign_w / 4, (1, 1, 1), 0.08)

    def _wall_panel(self, texture: str, base: tuple[float, float, float], heading: float, width: float,
                    height: float, color: tuple[float, float, float], offset: float) -> None:
        ox, oy = heading_vector(heading)
        self._wall_panel_on(self.mesh(texture, base[0] + ox * offset, base[1] + oy * offset), base, heading,
                            width, height, color, offset)

    # -- linear things ----------------------------------------------------------------
    def _segment(self, seg: Segment) -> None:
        if seg.type == "invisible_wall":
            return
        height = seg.height or SEGMENT_HEIGHT[seg.type]
        for a, b in zip(seg.points[:-1], seg.points[1:]):
            cx, cy, half_length, _, angle = segment_rect(a, b, 0.1)
            z = min(self.ground(*a), self.ground(*b), self.ground(cx, cy))
            mesh = self.mesh("plain", cx, cy)
            length = half_length * 2
            if seg.type == "hedge":
                mesh.box((cx, cy, z - 0.2), (length + 0.9, 0.9, height + 0.2), angle, (0.16, 0.42, 0.18))
            elif seg.type == "low_wall":
                self.mesh("cobble", cx, cy).box((cx, cy, z - 0.2), (length + 0.5, 0.5, height + 0.2), angle,
                                                 (0.7, 0.68, 0.64), uv_scale=(1.0, 1.0))
            else:
                color = (0.95, 0.95, 0.92) if seg.type == "fence" else (0.45, 0.32, 0.2)
                posts = max(1, math.ceil(length / 2.0))
                for i in range(posts + 1):
                    t = i / posts
                    px, py = a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t
                    mesh.box((px, py, self.ground(px, py) - 0.1), (0.12, 0.12, height + 0.1), angle, color)
                for rail_z in (height * 0.45, height * 0.9):
                    mesh.box((cx, cy, z + rail_z), (length, 0.06, 0.1), angle, color)

    # -- props ------------------------------------------------------------------------
    def _prop(self, p: Prop) -> None:
        x, y = p.pos
        z = self.ground(x, y)
        s = p.scale
        mesh = self.mesh("plain", x, y)
        if p.type == "tree":
            mesh.cylinder((x, y, z), 0.25 * s, 2.2 * s, (0.42, 0.28, 0.16), segments=5, cap=False)
            shade = 0.8 + 0.2 * math.sin(x * 0.7 + y)
            mesh.sphere((x, y, z + 3.2 * s), 1.9 * s, (0.22 * shade, 0.5 * shade, 0.2 * shade), rings=4, segments=7,
                        scale=(1, 1, 0.9))
        elif p.type == "pine":
            mesh.cylinder((x, y, z), 0.22 * s, 1.2 * s, (0.38, 0.25, 0.14), segments=5, cap=False)
            for i, (radius, height) in enumerate(((1.8, 3.0), (1.2, 2.4))):
                mesh.cylinder((x, y, z + (1.0 + i * 1.8) * s), radius * s, height * s, (0.1, 0.35, 0.2),
                              segments=6, top_radius=0.0, cap=False)
        elif p.type == "rock":
            mesh.sphere((x, y, z - 0.2), 0.9 * s, (0.55, 0.54, 0.52), rings=4, segments=7, scale=(1.2, 1.0, 0.7))
        elif p.type == "bench":
            wood = (0.55, 0.36, 0.2)
            mesh.box((x, y, z + 0.42), (1.8 * s, 0.5, 0.08), p.rot, wood)
            back = heading_vector(p.rot + 180)
            mesh.box((x + back[0] * 0.22, y + back[1] * 0.22, z + 0.5), (1.8 * s, 0.06, 0.45), p.rot, wood)
            for side in (-1, 1):
                ox, oy = rotation_z(p.rot)[:2, 0] * side * 0.8 * s
                mesh.box((x + ox, y + oy, z), (0.08, 0.5, 0.42), p.rot, (0.2, 0.2, 0.2))
        elif p.type == "lamp":
            mesh.cylinder((x, y, z), 0.08, 3.6, (0.18, 0.18, 0.2), segments=6, cap=False)
            mesh.box((x, y, z + 3.6), (0.35, 0.35, 0.45), 0, (1.0, 0.92, 0.6))
            mesh.cylinder((x, y, z + 4.05), 0.3, 0.25, (0.18, 0.18, 0.2), segments=6, top_radius=0.0)
        elif p.type == "crate":
            self.mesh("wood", x, y).box((x, y, z), (1.0 * s, 1.0 * s, 1.0 * s), p.rot, (0.75, 0.55, 0.32),
                                         uv_scale=(1.0, 1.0))
        elif p.type == "cone":
            mesh.cylinder((x, y, z), 0.22, 0.75, (1.0, 0.45, 0.05), segments=8, top_radius=0.03)
            mesh.cylinder((x, y, z + 0.35), 0.15, 0.12, (0.95, 0.95, 0.95), segments=8)
        elif p.type == "barrel":
            mesh.cylinder((x, y, z), 0.35 * s, 0.95 * s, (0.45, 0.3, 0.18), segments=10)
        elif p.type == "flowerbed":
            mesh.box((x, y, z), (2.4 * s, 1.2 * s, 0.35), p.rot, (0.4, 0.28, 0.18))
            for i in range(6):
                fx, fy = rotation_z(p.rot)[:2, :2] @ np.array([(i % 3 - 1) * 0.7 * s, (i // 3 - 0.5) * 0.5 * s])
                color = ((0.95, 0.2, 0.3), (0.98, 0.85, 0.2), (0.7, 0.3, 0.9))[i % 3]
                mesh.sphere((x + fx, y + fy, z + 0.45), 0.2, color, rings=3, segments=6)
        elif p.type == "crane":
            yellow = (0.98, 0.78, 0.1)
            mesh.box((x, y, z), (1.4, 1.4, 18), 0, yellow)
            mesh.box((x - 4, y, z + 18), (16, 0.8, 0.8), 0, yellow)
            mesh.box((x + 2.5, y, z + 16), (2.5, 2.5, 2.0), 0, (0.3, 0.3, 0.35))

    # -- landmarks --------------------------------------------------------------------
    def _structure(self, s: object) -> None:
        if isinstance(s, ClockTower):
            self._clock_tower(s)
        elif isinstance(s, Fountain):
            self._fountain(s)
        elif isinstance(s, (Bridge, Pier)):
            self._deck(s)
        elif isinstance(s, Gate):
            self._gate(s)
        elif isinstance(s, Lighthouse):
            self._lighthouse(s)

    def _clock_tower(self, t: ClockTower) -> None:
        x, y = t.pos
        z = self.ground(x, y)
        stone = self.mesh("cobble", x, y)
        stone.box((x, y, z - 0.5), (t.size, t.size, t.height + 0.5), 0, t.color, uv_scale=(1.5, 1.5))
        self.mesh("plain", x, y).box((x, y, z + t.height), (t.size + 0.6, t.size + 0.6, 0.5), 0, (0.5, 0.45, 0.4))
        self.mesh("plain", x, y).roof("pyramid", (x, y, z + t.height + 0.5), t.size, t.size, 7.0, 0, t.roof_color)
        for heading in (0, 90, 180, 270):
            ox, oy = heading_vector(heading)
            face_base = (x + ox * t.size / 2, y + oy * t.size / 2, z + t.height - 4.6)
            self._wall_panel("clock", face_base, heading, 3.6, 3.6, (1, 1, 1), 0.05)
        self._wall_panel("plain", (x, y - t.size / 2, z), 180, 1.6, 2.6, (0.3, 0.2, 0.12), 0.04)

    def _fountain(self, f: Fountain) -> None:
        x, y = f.pos
        z = self.ground(x, y)
        stone = (0.82, 0.8, 0.76)
        mesh = self.mesh("plain", x, y)
        mesh.cylinder((x, y, z - 0.2), f.radius, 0.9, stone, segments=20)
        mesh.cylinder((x, y, z + 0.71), f.radius - 0.35, 0.02, (0.35, 0.6, 0.85), segments=20)
        mesh.cylinder((x, y, z + 0.7), 0.5, 1.6, stone, segments=10)
        mesh.cylinder((x, y, z + 2.3), 1.4, 0.3, stone, segments=14, top_radius=1.6)
        mesh.cylinder((x, y, z + 2.6), 0.35, 1.4, (0.75, 0.88, 1.0), segments=8, top_radius=0.05)

    def _deck(self, s: Bridge | Pier) -> None:
        deck_z = deck_height(self.terrain, s)
        cx, cy, half_length, half_width, angle = segment_rect(s.start, s.end, s.width)
        color = s.color if isinstance(s, Bridge) else (0.5, 0.38, 0.26)
        wood = self.mesh("wood", cx, cy)
        wood.box((cx, cy, deck_z - 0.35), (half_length * 2, s.width, 0.35), angle, color, uv_scale=(2.0, 1.0))
        nx, ny = -math.sin(math.radians(angle)), math.cos(math.radians(angle))
        ux, uy = math.cos(math.radians(angle)), math.sin(math.radians(angle))
        posts = max(2, math.ceil(half_length * 2 / 2.5))
        mesh = self.mesh("plain", cx, cy)
        for side in (-1, 1):
            rx, ry = cx + nx * side * half_width, cy + ny * side * half_width
            mesh.box((rx, ry, deck_z + 0.9), (half_length * 2, 0.1, 0.1), angle, color)
            for i in range(posts + 1):
                t = -half_length + 2 * half_length * i / posts
                px, py = rx + ux * t, ry + uy * t
                mesh.box((px, py, deck_z - 2.5), (0.14, 0.14, 3.5), angle, (0.35, 0.25, 0.15))
        if isinstance(s, Pier):
            ex, ey = s.end
            mesh.box((ex, ey, deck_z + 0.9), (0.1, s.width, 0.1), angle, color)

    def _gate(self, g: Gate) -> None:
        x, y = g.pos
        z = self.ground(x, y)
        ux, uy = heading_vector(g.rot - 90)
        offset = g.width / 2 + 0.6
        mesh = self.mesh("cobble", x, y)
        for side in (-1, 1):
            mesh.box((x + ux * side * offset, y + uy * side * offset, z - 0.3), (1.2, 1.2, g.height + 0.3), g.rot,
                     g.color, uv_scale=(1.0, 1.0))
        mesh.box((x, y, z + g.height - 1.4), (g.width + 2.4, 1.0, 1.4), g.rot, g.color, uv_scale=(1.0, 1.0))
        if g.text:
            key = f"sign:gate:{g.text}"
            self.data.images[key] = textures.sign(g.text, (0.25, 0.2, 0.15), (0.98, 0.9, 0.6), width=1024, height=128)
            for heading in (g.rot, g.rot + 180):
                ox, oy = heading_vector(heading)
                self._wall_panel(key, (x + ox * 0.5, y + oy * 0.5, z + g.height - 1.3), heading, g.width, 1.2,
                                 (1, 1, 1), 0.03)

    def _lighthouse(self, lh: Lighthouse) -> None:
        x, y = lh.pos
        z = self.ground(x, y)
        mesh = self.mesh("plain", x, y)
        bands = 6
        for i in range(bands):
            color = (0.95, 0.95, 0.95) if i % 2 == 0 else (0.85, 0.15, 0.15)
            r0 = 2.2 - 0.8 * i / bands
            r1 = 2.2 - 0.8 * (i + 1) / bands
            mesh.cylinder((x, y, z + lh.height * i / bands), r0, lh.height / bands, color, segments=14, top_radius=r1,
                          cap=False)
        mesh.cylinder((x, y, z + lh.height), 1.5, 1.6, (1.0, 0.95, 0.6), segments=10)
        mesh.cylinder((x, y, z + lh.height + 1.6), 1.8, 1.5, (0.2, 0.2, 0.25), segments=10, top_radius=0.0)

    # -- state-dependent pieces -------------------------------------------------------
    def _gatekeeper(self, keeper: Gatekeeper) -> None:
        x, y = keeper.pos
        z = self.ground(x, y)
        bit = self.flag_bits[keeper.open_flag]
        closed = self.mesh("wood", x, y, (bit, False))
        closed.box((x, y, z), (keeper.size[0], keeper.size[1], keeper.height), keeper.rot, keeper.color,
                   uv_scale=(1.0, 1.0))
        opened = self.mesh("wood", x, y, (bit, True))
        hinge = rotation_z(keeper.rot) @ np.array([0, keeper.size[1] / 2, 0])
        ox, oy = x + hinge[0], y + hinge[1]
        opened.box((ox - 0.2 - keeper.size[1] / 2, oy, z), (keeper.size[1], keeper.size[0], keeper.height),
                   keeper.rot, keeper.color, uv_scale=(1.0, 1.0))

    def _interactable(self, item: Interactable) -> None:
        x, y = item.pos
        z = self.terrain.ground_height(x, y)
        bit = self.flag_bits.get(item.state_flag or "", None)
        before = (bit, False) if bit is not None else None
        after = (bit, True) if bit is not None else None
        c = item.color
        if item.kind == "item":
            mesh = self.mesh("plain", x, y, before)
            mesh.cylinder((x, y, z + 0.05), 0.22, 0.06, c, segments=10)
            mesh.cylinder((x, y, z + 0.11), 0.12, 0.05, (1.0, 1.0, 1.0), segments=8)
        elif item.kind == "sign":
            mesh = self.mesh("plain", x, y)
            for side in (-1, 1):
                ox, oy = rotation_z(item.facing)[:2, 0] * side * 0.8
                mesh.box((x + ox, y + oy, z), (0.12, 0.12, 2.0), item.facing, c)
            mesh.box((x, y, z + 1.0), (1.9, 0.1, 1.1), item.facing, c)
            key = f"sign:{item.id}"
            self.data.images[key] = textures.sign("NOTICE", (0.95, 0.92, 0.82), (0.2, 0.15, 0.1))
            self._wall_panel(key, (x, y, z + 1.25), item.facing, 1.7, 0.45, (1, 1, 1), 0.06)
        elif item.kind == "door":
            closed = self.mesh("plain", x, y, before)
            self._wall_panel_on(closed, (x, y, z), item.facing, 1.8, 2.7, c, 0.12)
            opened = self.mesh("plain", x, y, after)
            self._wall_panel_on(opened, (x, y, z), item.facing, 1.8, 2.7, (0.05, 0.04, 0.03), 0.12)
        elif item.kind == "lever":
            base = self.mesh("plain", x, y)
            base.box((x, y, z), (0.5, 0.5, 0.8), item.facing, (0.3, 0.3, 0.32))
            for condition, tilt in ((before, 0.35), (after, -0.35)):
                handle = self.mesh("plain", x, y, condition)
                hx, hy = heading_vector(item.facing)
                handle.cylinder((x + hx * tilt, y + hy * tilt, z + 0.8), 0.05, 0.7, (0.2, 0.2, 0.2), segments=6)
                handle.sphere((x + hx * tilt, y + hy * tilt, z + 1.55), 0.12, c, rings=4, segments=8)
        elif item.kind == "mailbox":
            mesh = self.mesh("plain", x, y)
            mesh.cylinder((x, y, z), 0.06, 1.0, (0.2, 0.2, 0.2), segments=6)
            mesh.box((x, y, z + 1.0), (0.5, 0.4, 0.45), item.facing, c)
            mesh.sphere((x, y, z + 1.45), 0.25, c, rings=3, segments=8, scale=(1, 0.8, 0.5), hemisphere=True)
        elif item.kind == "switch":
            mesh = self.mesh("plain", x, y)
            mesh.box((x, y, z), (0.4, 0.4, 1.1), item.facing, (0.35, 0.33, 0.3))
            for condition, color in ((before, (0.6, 0.6, 0.6)), (after, c)):
                self.mesh("plain", x, y, condition).sphere((x, y, z + 1.2), 0.16, color, rings=4, segments=8)
        elif item.kind == "chest":
            mesh = self.mesh("wood", x, y)
            mesh.box((x, y, z), (1.0, 0.7, 0.55), item.facing, c, uv_scale=(1.0, 1.0))
            lid_closed = self.mesh("plain", x, y, before)
            lid_closed.box((x, y, z + 0.55), (1.05, 0.75, 0.2), item.facing, (0.45, 0.28, 0.1))
            lid_open = self.mesh("plain", x, y, after)
            bx, by = heading_vector(item.facing + 180)
            lid_open.box((x + bx * 0.4, y + by * 0.4, z + 0.55), (1.05, 0.2, 0.75), item.facing, (0.45, 0.28, 0.1))
            lid_open.box((x, y, z + 0.5), (0.8, 0.5, 0.08), item.facing, (0.95, 0.85, 0.3))

    def _wall_panel_on(self, mesh: MeshBuilder, base: tuple[float, float, float], heading: float, width: float,
                       height: float, color: tuple[float, float, float], offset: float) -> None:
        """A flat panel just outside a wall whose outward normal points along `heading`.

        Corners run bottom-left, bottom-right, top-right, top-left as seen by someone facing the
        wall, so text textures read the right way round and backface culling keeps the front.
        """
        ox, oy = heading_vector(heading)
        lx, ly = oy, -ox  # the viewer's left, looking at the wall from outside
        x, y, z = base[0] + ox * offset, base[1] + oy * offset, base[2]
        hw = width / 2
        mesh.quad([(x + lx * hw, y + ly * hw, z), (x - lx * hw, y - ly * hw, z),
                   (x - lx * hw, y - ly * hw, z + height), (x + lx * hw, y + ly * hw, z + height)], color)
