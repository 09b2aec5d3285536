"""Draws the town with Panda3D into an offscreen buffer and reads the pixels back.

Lighting is baked into vertex colours once (the sun never moves) and distance fog is
blended into those colours per vertex each frame, because Panda3D's software renderer
supports neither fog nor texgen (measured; see docs/architecture.md).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import cv2
import numpy as np

from core.world.content import WorldSpec
from core.world.figures import PLAYER_FIGURE, figure_mesh
from core.world.geometry2d import heading_vector
from core.world.layout import Layout
from core.world.meshes import MeshBuilder
from core.world.panda_setup import RendererChoice, configure, offscreen_pipe
from core.world.scene import GroupKey, SceneData
from core.world.simulation import GameState

if TYPE_CHECKING:  # Panda3D is imported when a renderer is made, after configure() has set it up
    from panda3d.core import GeomNode, GeomVertexData, NodePath, Texture

cv2.setNumThreads(1)  # the world is single-threaded; a pool only adds wake-up latency per frame

_CAMERA_BLOCKERS = 2.0  # obstacles this far from the character or more may hide the camera


def bake_lighting(spec: WorldSpec, normals: np.ndarray, colors: np.ndarray) -> np.ndarray:
    sun = -np.asarray(spec.render.sun_direction, dtype=np.float32)
    sun /= np.linalg.norm(sun)
    diffuse = np.clip(normals @ sun, 0.0, 1.0)[:, None]
    sky = np.clip(normals[:, 2:3], 0.0, 1.0) * 0.12
    light = spec.render.ambient + spec.render.sun_strength * diffuse + sky
    return np.clip(colors[:, :3] * light, 0.0, 1.0).astype(np.float32)


class Renderer:
    def __init__(self, spec: WorldSpec, layout: Layout, scene: SceneData, width: int, height: int,
                 renderer: RendererChoice = "software") -> None:
        self.display_module = configure(width, height, renderer)
        from direct.showbase.ShowBase import ShowBase
        from panda3d.core import CullBinManager, GraphicsOutput, Texture

        self.spec = spec
        self.layout = layout
        self.width, self.height = width, height
        self.base = ShowBase(windowType="none")
        self.base.pipe = offscreen_pipe(self.display_module)
        self.base.openDefaultWindow(type="offscreen")
        self.base.disableMouse()
        self.base.setBackgroundColor(*spec.render.fog_color, 1)
        lens = self.base.camLens
        lens.setFov(spec.render.fov_deg)
        # Past fog_end everything is drawn in the fog colour, which is also the horizon colour of the
        # sky, so culling there changes no pixel and saves the software rasteriser the work.
        lens.setNearFar(0.25, spec.render.fog_end + 15.0)
        self._capture = Texture("frame")
        self.base.win.addRenderTexture(self._capture, GraphicsOutput.RTMCopyRam)
        # Opaque geometry front to back lets the software rasteriser reject hidden pixels before
        # texturing them: about 25% faster on town views (docs/performance.md).
        CullBinManager.getGlobalPtr().setBinType("opaque", CullBinManager.BTFrontToBack)
        self._textures = {name: _panda_texture(name, image) for name, image in scene.images.items()}
        self._fog = _FogField(spec.render.fog_color, spec.render.fog_start, spec.render.fog_end)
        self._fog_eye: tuple[int, ...] | None = None
        self._conditional: list[tuple[NodePath, int, bool]] = []
        self.base.render.setLightOff()
        self.base.render.setShaderOff()
        for key, builder in scene.groups.items():
            if not builder.empty:
                self._add_group(key, builder)
        self._fog.freeze()
        self._sky = self._make_sky()
        self._player = self._make_player()
        self._shadow = self._make_shadow()

    # -- building nodes -----------------------------------------------------------------
    def _add_group(self, key: GroupKey, builder: MeshBuilder) -> None:
        positions, normals, colors, uvs, triangles = builder.arrays()
        lit = bake_lighting(self.spec, normals, colors)
        node, color_array = _geom_node(f"{key.texture}@{key.chunk}", positions, uvs, lit, triangles)
        path = self.base.render.attachNewNode(node)
        texture = self._textures.get(key.texture)
        if texture is not None:
            path.setTexture(texture)
        if key.condition is not None:
            self._conditional.append((path, key.condition[0], key.condition[1]))
        self._fog.add(positions, lit, color_array)

    def _make_sky(self) -> NodePath:
        sky = MeshBuilder()
        top, horizon = np.array(self.spec.render.sky_top), np.array(self.spec.render.sky_horizon)
        radius = self.spec.render.fog_end
        sky.sphere((0, 0, -0.1 * radius), radius, (1, 1, 1), rings=6, segments=16, hemisphere=True)
        positions, _normals, _, uvs, triangles = sky.arrays()
        t = np.clip(positions[:, 2:3] / radius, 0.0, 1.0) ** 0.6
        colors = (horizon * (1 - t) + top * t).astype(np.float32)
        node, _ = _geom_node("sky", positions, uvs, colors, triangles[:, ::-1].copy())
        path = self.base.render.attachNewNode(node)
        path.setBin("background", 0)
        path.setDepthWrite(False)
        path.setDepthTest(False)
        path.setTextureOff(1)
        return path

    def _make_player(self) -> NodePath:
        builder = figure_mesh(PLAYER_FIGURE)
        positions, normals, colors, uvs, triangles = builder.arrays()
        node, _ = _geom_node("player", positions, uvs, bake_lighting(self.spec, normals, colors), triangles)
        path = self.base.render.attachNewNode(node)
        path.setTextureOff(1)
        return path

    def _make_shadow(self) -> NodePath:
        from panda3d.core import TransparencyAttrib

        disc = MeshBuilder()
        angles = np.linspace(0, 2 * math.pi, 17)[:-1]
        disc.polygon_fan((0, 0, 0), np.column_stack([np.cos(angles) * 0.45, np.sin(angles) * 0.45,
                                                     np.zeros_like(angles)]), (0, 0, 0))
        positions, _, _, uvs, triangles = disc.arrays()
        colors = np.zeros((len(positions), 4), np.float32)
        colors[:, 3] = 0.35
        node, _ = _geom_node("shadow", positions, uvs, colors, triangles)
        path = self.base.render.attachNewNode(node)
        path.setTransparency(TransparencyAttrib.MAlpha)
        path.setTextureOff(1)
        path.setDepthWrite(False)
        return path

    # -- per frame ----------------------------------------------------------------------
    def _apply_flags(self, flags: int) -> None:
        for path, bit, shown_when in self._conditional:
            if bool(flags >> bit & 1) == shown_when:
                path.show()
            else:
                path.hide()

    def _apply_fog(self, eye: np.ndarray) -> None:
        """Blend fog into vertex colours, seen from the eye snapped to a 1 m grid.

        Snapping keeps every frame a pure function of the game state (determinism) and lets
        frames whose eye stays in the same cell skip the work; a 1 m shift changes the fog of
        a vertex 35 m or more away by well under one grey level.
        """
        snapped = tuple(round(v) for v in eye)
        if snapped == self._fog_eye:
            return
        self._fog_eye = snapped
        self._fog.update(np.asarray(snapped, dtype=np.float32))

    def camera_pose(self, state: GameState, yaw_offset: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        ch = self.spec.character
        target = np.array([state.x, state.y, state.z + ch.camera_target_height])
        yaw = state.cam_yaw + yaw_offset
        pitch = math.radians(state.cam_pitch)
        fx, fy = heading_vector(yaw)
        forward = np.array([fx * math.cos(pitch), fy * math.cos(pitch), math.sin(pitch)])
        distance = self._unblocked_distance(target, -forward, ch.camera_distance)
        eye = target - forward * distance
        eye[2] = max(eye[2], self.layout.terrain.terrain_height(eye[0], eye[1]) + 0.4)
        return eye, target

    def _unblocked_distance(self, target: np.ndarray, back: np.ndarray, wanted: float) -> float:
        """Pull the camera in front of tall obstacles behind the character, as third-person games do."""
        blockers = [o for o in self.layout.collision.nearby(float(target[0]), float(target[1]), wanted + 1.0)
                    if o.kind == "solid" and o.name not in ("world_edge",) and not o.is_circle
                    and o.half_x > _CAMERA_BLOCKERS and o.half_y > _CAMERA_BLOCKERS]
        distance = 0.6
        while distance < wanted:
            probe = target + back * (distance + 0.25)
            if any(o.push_out(float(probe[0]), float(probe[1]), 0.3) is not None for o in blockers):
                return max(distance, 0.6)
            distance += 0.25
        return wanted

    def render(self, state: GameState, yaw_offset: float = 0.0) -> np.ndarray:
        eye, target = self.camera_pose(state, yaw_offset)
        camera = self.base.camera
        camera.setPos(*eye)
        camera.lookAt(*target)
        self._sky.setPos(*eye)
        self._player.setPos(state.x, state.y, state.z)
        self._player.setH(state.facing)
        self._shadow.setPos(state.x, state.y, state.z + 0.06)
        self._apply_flags(state.flags)
        self._apply_fog(eye)
        self.base.graphicsEngine.renderFrame()
        return self.read_back()

    def read_back(self) -> np.ndarray:
        """The frame as RGB, top row first. The buffer's native layout is BGRA, bottom row first."""
        raw = np.frombuffer(memoryview(self._capture.getRamImage()), np.uint8)
        channels = raw.size // (self.width * self.height)
        image = raw.reshape(self.height, self.width, channels)
        code = cv2.COLOR_BGRA2RGB if channels == 4 else cv2.COLOR_BGR2RGB
        return cv2.cvtColor(image[::-1], code)

    def close(self) -> None:
        self.base.destroy()


class _FogField:
    """Every static vertex's position and lit colour, fogged in one vectorised pass per eye cell.

    Groups whose vertices are all nearer than fog_start, or all beyond fog_end, keep the
    bytes they were last given; only groups that straddle the fog band are rewritten.
    """

    def __init__(self, fog_color: tuple[float, float, float], start: float, end: float) -> None:
        self.fog_color = np.asarray(fog_color, np.float32)
        self.start, self.end = start, end
        self._positions: list[np.ndarray] = []
        self._lit: list[np.ndarray] = []
        self._vdatas: list[GeomVertexData] = []
        self._regimes: list[str] = []

    def add(self, positions: np.ndarray, lit: np.ndarray, vdata: GeomVertexData) -> None:
        self._positions.append(positions.astype(np.float32))
        self._lit.append(lit[:, :3].astype(np.float32))
        self._vdatas.append(vdata)
        self._regimes.append("clear")

    def freeze(self) -> None:
        self.positions = np.concatenate(self._positions)
        self.lit = np.concatenate(self._lit)
        sizes = [len(p) for p in self._positions]
        self.bounds = np.cumsum([0, *sizes])
        centers = np.array([p.mean(axis=0) for p in self._positions], np.float32)
        radii = np.array([np.max(np.linalg.norm(p - c, axis=1)) for p, c in zip(self._positions, centers)])
        self.centers, self.radii = centers, radii.astype(np.float32)
        self.rgba = np.full((len(self.positions), 4), 255, np.uint8)
        del self._positions, self._lit

    def update(self, eye: np.ndarray) -> None:
        center_distance = np.linalg.norm(self.centers - eye, axis=1)
        regimes: np.ndarray = np.where(center_distance + self.radii <= self.start, 0,
                           np.where(center_distance - self.radii >= self.end, 2, 1))
        offsets = self.positions - eye
        distance = np.sqrt(np.einsum("ij,ij->i", offsets, offsets))
        fog = np.clip((distance - self.start) / (self.end - self.start), 0.0, 1.0)
        fog *= 2.0 - fog  # ease-out: haze builds quickly, then saturates toward the horizon
        blended = self.lit + (self.fog_color - self.lit) * fog[:, None]
        self.rgba[:, :3] = (blended * 255.0 + 0.5).astype(np.uint8)
        names = ("clear", "partial", "full")
        for index, regime in enumerate(regimes):
            name = names[int(regime)]
            if name == "partial" or name != self._regimes[index]:
                chunk = self.rgba[self.bounds[index]:self.bounds[index + 1]]
                memoryview(self._vdatas[index].modifyArray(1)).cast("B")[:] = chunk.tobytes()
                self._regimes[index] = name


def _panda_texture(name: str, image: np.ndarray) -> Texture:
    from panda3d.core import SamplerState, Texture

    texture = Texture(name)
    h, w = image.shape[:2]
    texture.setup2dTexture(w, h, Texture.TUnsignedByte, Texture.FRgb)
    texture.setRamImageAs(np.ascontiguousarray(image[::-1]).tobytes(), "RGB")
    texture.setMinfilter(SamplerState.FTLinearMipmapNearest)  # trilinear costs 40% more in software
    texture.setMagfilter(SamplerState.FTLinear)
    texture.setWrapU(SamplerState.WMRepeat)
    texture.setWrapV(SamplerState.WMRepeat)
    return texture


def _geom_node(name: str, positions: np.ndarray, uvs: np.ndarray, colors: np.ndarray,
               triangles: np.ndarray) -> tuple[GeomNode, GeomVertexData]:
    """A GeomNode whose colours live in their own array, so fog can rewrite them cheaply."""
    from panda3d.core import (
        Geom,
        GeomEnums,
        GeomNode,
        GeomTriangles,
        GeomVertexArrayFormat,
        GeomVertexData,
        GeomVertexFormat,
    )

    main = GeomVertexArrayFormat()
    main.addColumn("vertex", 3, GeomEnums.NT_float32, GeomEnums.C_point)
    main.addColumn("texcoord", 2, GeomEnums.NT_float32, GeomEnums.C_texcoord)
    color = GeomVertexArrayFormat()
    color.addColumn("color", 4, GeomEnums.NT_uint8, GeomEnums.C_color)
    fmt = GeomVertexFormat()
    fmt.addArray(main)
    fmt.addArray(color)
    registered = GeomVertexFormat.registerFormat(fmt)
    vdata = GeomVertexData(name, registered, Geom.UHDynamic)
    n = len(positions)
    vdata.setNumRows(n)
    interleaved = np.empty((n, 5), np.float32)
    interleaved[:, :3] = positions
    interleaved[:, 3:] = uvs
    memoryview(vdata.modifyArray(0)).cast("B")[:] = interleaved.tobytes()
    rgba = np.empty((n, 4), np.uint8)
    rgba[:, :3] = (np.clip(colors[:, :3], 0, 1) * 255 + 0.5).astype(np.uint8)
    rgba[:, 3] = (np.clip(colors[:, 3], 0, 1) * 255 + 0.5).astype(np.uint8) if colors.shape[1] == 4 else 255
    memoryview(vdata.modifyArray(1)).cast("B")[:] = rgba.tobytes()
    prim = GeomTriangles(Geom.UHStatic)
    prim.setIndexType(GeomEnums.NT_uint32)
    indices = prim.modifyVertices()
    indices.setNumRows(triangles.size)
    memoryview(indices).cast("B")[:] = triangles.astype(np.uint32).tobytes()
    geom = Geom(vdata)
    geom.addPrimitive(prim)
    node = GeomNode(name)
    node.addGeom(geom)
    return node, vdata
