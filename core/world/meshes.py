"""Procedural mesh building with numpy: boxes, cylinders, cones, spheres, roofs and ribbons.

A MeshBuilder collects vertices in local or world coordinates, with per-vertex normals
(used once, to bake sunlight into the colours) and texture coordinates.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

import numpy as np

ColorLike = Sequence[float]
PointLike = Sequence[float] | np.ndarray  # a point: a tuple, or an array computed from others


def rotation_z(heading_deg: float) -> np.ndarray:
    rad = math.radians(heading_deg)
    c, s = math.cos(rad), math.sin(rad)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _rgba(color: ColorLike | np.ndarray) -> np.ndarray:
    values = list(color)
    if len(values) == 3:
        values.append(1.0)
    return np.array(values, dtype=np.float32)


class MeshBuilder:
    def __init__(self) -> None:
        self._positions: list[np.ndarray] = []
        self._normals: list[np.ndarray] = []
        self._colors: list[np.ndarray] = []
        self._uvs: list[np.ndarray] = []
        self._triangles: list[np.ndarray] = []
        self.vertex_count = 0

    @property
    def empty(self) -> bool:
        return self.vertex_count == 0

    def add(self, positions: np.ndarray, normals: np.ndarray, color: ColorLike | np.ndarray,
            uvs: np.ndarray | None, triangles: np.ndarray) -> None:
        n = len(positions)
        colors = np.asarray(color, dtype=np.float32)
        if colors.ndim == 1:
            colors = np.broadcast_to(_rgba(colors), (n, 4))
        elif colors.shape[1] == 3:
            colors = np.hstack([colors, np.ones((n, 1), np.float32)])
        self._positions.append(np.asarray(positions, dtype=np.float32))
        self._normals.append(np.asarray(normals, dtype=np.float32))
        self._colors.append(np.asarray(colors, dtype=np.float32))
        self._uvs.append(np.zeros((n, 2), np.float32) if uvs is None else np.asarray(uvs, np.float32))
        self._triangles.append(np.asarray(triangles, dtype=np.int32) + self.vertex_count)
        self.vertex_count += n

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return (np.concatenate(self._positions), np.concatenate(self._normals), np.concatenate(self._colors),
                np.concatenate(self._uvs), np.concatenate(self._triangles))

    # -- flat pieces ------------------------------------------------------------------
    def quad(self, corners: Sequence[Sequence[float]] | np.ndarray, color: ColorLike,
             uvs: Sequence[Sequence[float]] = ((0, 0), (1, 0), (1, 1), (0, 1))) -> None:
        """A quad from four corners listed counter-clockwise as seen from its front."""
        p = np.asarray(corners, dtype=np.float64)
        normal = np.cross(p[1] - p[0], p[2] - p[0])
        length = np.linalg.norm(normal)
        normal = normal / length if length > 0 else np.array([0.0, 0.0, 1.0])
        self.add(p, np.tile(normal, (4, 1)), color, np.asarray(uvs), np.array([[0, 1, 2], [0, 2, 3]]))

    def polygon_fan(self, center: PointLike, rim: np.ndarray, color: ColorLike, uv_scale: float = 0.0) -> None:
        """A fan of triangles from a centre to a closed rim (counter-clockwise seen from above)."""
        c = np.asarray(center, dtype=np.float64)
        positions = np.vstack([c, rim])
        n = len(rim)
        triangles = np.array([[0, 1 + i, 1 + (i + 1) % n] for i in range(n)])
        uvs = positions[:, :2] * uv_scale if uv_scale else None
        self.add(positions, np.tile([0.0, 0.0, 1.0], (n + 1, 1)), color, uvs, triangles)

    # -- solids -----------------------------------------------------------------------
    def box(self, base: Sequence[float], size: Sequence[float], heading: float, color: ColorLike,
            uv_scale: tuple[float, float] | None = None, top: bool = True, bottom: bool = False,
            skip_faces: Sequence[str] = ()) -> None:
        """A box standing on `base` (x, y, z of the bottom centre), size (w, d, h) along local x, y, z."""
        hw, hd, h = size[0] / 2, size[1] / 2, size[2]
        rot = rotation_z(heading)
        origin = np.asarray(base, dtype=np.float64)
        # Corners run bottom-left, bottom-right, top-right, top-left as seen from outside.
        faces = {
            "front": ([(hw, hd, 0), (-hw, hd, 0), (-hw, hd, h), (hw, hd, h)], (0, 1, 0), size[0]),
            "back": ([(-hw, -hd, 0), (hw, -hd, 0), (hw, -hd, h), (-hw, -hd, h)], (0, -1, 0), size[0]),
            "right": ([(hw, -hd, 0), (hw, hd, 0), (hw, hd, h), (hw, -hd, h)], (1, 0, 0), size[1]),
            "left": ([(-hw, hd, 0), (-hw, -hd, 0), (-hw, -hd, h), (-hw, hd, h)], (-1, 0, 0), size[1]),
        }
        if top:
            faces["top"] = ([(-hw, -hd, h), (hw, -hd, h), (hw, hd, h), (-hw, hd, h)], (0, 0, 1), size[0])
        if bottom:
            faces["bottom"] = ([(-hw, hd, 0), (hw, hd, 0), (hw, -hd, 0), (-hw, -hd, 0)], (0, 0, -1), size[0])
        for name, (corners, normal, width) in faces.items():
            if name in skip_faces:
                continue
            local = np.asarray(corners, dtype=np.float64)
            world = local @ rot.T + origin
            if uv_scale is not None and name not in ("top", "bottom"):
                su, sv = uv_scale
                uvs = np.array([[0, 0], [width / su, 0], [width / su, h / sv], [0, h / sv]])
            else:
                uvs = np.array([[0, 0], [1, 0], [1, 1], [0, 1]])
            normal_world = rot @ np.asarray(normal, dtype=np.float64)
            self.add(world, np.tile(normal_world, (4, 1)), color, uvs, np.array([[0, 1, 2], [0, 2, 3]]))

    def cylinder(self, base: Sequence[float], radius: float, height: float, color: ColorLike,
                 segments: int = 10, top_radius: float | None = None, cap: bool = True,
                 squash: tuple[float, float] = (1.0, 1.0)) -> None:
        """A cylinder or a cone (top_radius=0) standing on `base`."""
        top_r = radius if top_radius is None else top_radius
        angles = np.linspace(0, 2 * math.pi, segments + 1)
        ring = np.stack([np.cos(angles) * squash[0], np.sin(angles) * squash[1], np.zeros_like(angles)], axis=1)
        origin = np.asarray(base, dtype=np.float64)
        bottom = ring * radius + origin
        top = ring * top_r + origin + np.array([0, 0, height])
        slope = (radius - top_r) / height if height else 0.0
        normals = ring + np.array([0, 0, slope])
        normals /= np.linalg.norm(normals, axis=1, keepdims=True)
        positions = np.vstack([bottom, top])
        triangles: list[list[int]] = []
        n = segments + 1
        for i in range(segments):
            triangles += [[i, i + 1, n + i + 1], [i, n + i + 1, n + i]]
        u = angles / (2 * math.pi)
        uvs = np.vstack([np.stack([u, np.zeros(n)], 1), np.stack([u, np.ones(n)], 1)])
        self.add(positions, np.vstack([normals, normals]), color, uvs, np.array(triangles))
        if cap and top_r > 0:
            self.polygon_fan(origin + np.array([0, 0, height]), top[:-1], color)

    def sphere(self, center: PointLike, radius: float, color: ColorLike, rings: int = 6,
               segments: int = 10, scale: tuple[float, float, float] = (1.0, 1.0, 1.0),
               hemisphere: bool = False) -> None:
        lat_end = math.pi / 2 if hemisphere else math.pi
        lats = np.linspace(0, lat_end, rings + 1)
        lons = np.linspace(0, 2 * math.pi, segments + 1)
        lat, lon = np.meshgrid(lats, lons, indexing="ij")
        unit = np.stack([np.sin(lat) * np.cos(lon), np.sin(lat) * np.sin(lon), np.cos(lat)], axis=-1).reshape(-1, 3)
        positions = unit * radius * np.asarray(scale) + np.asarray(center)
        normals = unit / np.asarray(scale)
        normals /= np.linalg.norm(normals, axis=1, keepdims=True)
        cols = segments + 1
        triangles: list[list[int]] = []
        for r in range(rings):
            for c in range(segments):
                a, b = r * cols + c, r * cols + c + 1
                triangles += [[a, a + cols, b], [b, a + cols, b + cols]]
        self.add(positions, normals, color, None, np.array(triangles))

    # -- roofs ------------------------------------------------------------------------
    def roof(self, shape: str, base: Sequence[float], width: float, depth: float, height: float,
             heading: float, color: ColorLike, overhang: float = 0.4) -> None:
        hw, hd = width / 2 + overhang, depth / 2 + overhang
        rot = rotation_z(heading)
        origin = np.asarray(base, dtype=np.float64)

        def to_world(pts: Sequence[Sequence[float]]) -> np.ndarray:
            return np.asarray(pts, dtype=np.float64) @ rot.T + origin

        if shape == "flat":
            self.box(base, (width + 2 * overhang, depth + 2 * overhang, max(height, 0.3)), heading, color)
            return
        if shape == "dome":
            self.box(base, (width + 0.6, depth + 0.6, 0.4), heading, color)
            radius = min(width, depth) / 2 * 0.85
            self.sphere(origin + np.array([0, 0, 0.4]), radius, color, rings=5, segments=14,
                        scale=(1, 1, height / radius), hemisphere=True)
            return
        if shape == "gable":
            ridge = [(-hw, 0, height), (hw, 0, height)]
        elif shape == "hip":
            inset = max(hw - hd, 0.0)
            ridge = [(-inset, 0, height), (inset, 0, height)]
        else:  # pyramid
            ridge = [(0, 0, height), (0, 0, height)]
        corners = [(-hw, -hd, 0), (hw, -hd, 0), (hw, hd, 0), (-hw, hd, 0)]
        r0, r1 = ridge
        faces = [
            [corners[0], corners[1], r1, r0],  # south slope
            [corners[2], corners[3], r0, r1],  # north slope
            [corners[1], corners[2], r1, r1],  # east end
            [corners[3], corners[0], r0, r0],  # west end
        ]
        for face in faces:
            pts = to_world(face)
            if np.allclose(pts[2], pts[3]):
                self._triangle(pts[:3], color)
            else:
                self.quad(pts, color)

    def _triangle(self, pts: np.ndarray, color: ColorLike) -> None:
        normal = np.cross(pts[1] - pts[0], pts[2] - pts[0])
        normal = normal / (np.linalg.norm(normal) or 1.0)
        self.add(pts, np.tile(normal, (3, 1)), color, np.array([[0, 0], [1, 0], [0.5, 1]]), np.array([[0, 1, 2]]))


def ribbon(builder: MeshBuilder, points: Sequence[Sequence[float]], width: float,
           height_at: Callable[[float, float], float], color: ColorLike, lift: float = 0.04, sample: float = 2.5,
           uv_scale: float = 4.0) -> None:
    """A strip of `width` along a 2-D polyline that follows the ground (height_at(x, y))."""
    pts = np.asarray(points, dtype=np.float64)
    travelled = 0.0
    for a, b in itertools.pairwise(pts):
        length = float(np.linalg.norm(b - a))
        if length == 0:
            continue
        direction = (b - a) / length
        side = np.array([-direction[1], direction[0]]) * width / 2
        steps = max(1, math.ceil(length / sample))
        ts = np.linspace(0, 1, steps + 1)
        centers = a + np.outer(ts, b - a)
        left, right = centers + side, centers - side
        z_left = np.array([height_at(x, y) for x, y in left]) + lift
        z_right = np.array([height_at(x, y) for x, y in right]) + lift
        positions = np.vstack([np.column_stack([right, z_right]), np.column_stack([left, z_left])])
        vs = (travelled + ts * length) / uv_scale
        uvs = np.vstack([np.column_stack([np.zeros_like(vs), vs]),
                         np.column_stack([np.full_like(vs, width / uv_scale), vs])])
        n = steps + 1
        triangles: list[list[int]] = []
        for i in range(steps):
            triangles += [[i, i + 1, n + i + 1], [i, n + i + 1, n + i]]
        builder.add(positions, np.tile([0.0, 0.0, 1.0], (2 * n, 1)), color, uvs, np.array(triangles))
        travelled += length
    for joint in pts[1:-1]:
        angles = np.linspace(0, 2 * math.pi, 13)[:-1]
        rim = np.column_stack([joint[0] + np.cos(angles) * width / 2, joint[1] + np.sin(angles) * width / 2])
        z = np.array([height_at(x, y) for x, y in rim]) + lift * 0.9
        center_z = height_at(joint[0], joint[1]) + lift * 0.9
        builder.polygon_fan((joint[0], joint[1], center_z), np.column_stack([rim, z]), color, uv_scale=1 / uv_scale)
