"""What is underfoot: the surface a footstep sounds of, from the world's own ground materials.

The same layers the renderer draws, topmost first: a deck (bridge, pier: wood), a plaza, a road (each with
its `surface`), the sand of low ground by the water (drawn sand-coloured below SAND_BELOW_M), and grass.
Everything but the decks is painted into a grid (CELL_M), tile by tile as footfalls reach them, so a footfall
costs a lookup.
"""

from __future__ import annotations

import numpy as np

from core.world.content import WorldSpec
from core.world.sound_spec import SURFACES
from core.world.terrain import Terrain, polyline_distance_grid

SAND_BELOW_M = -0.4  # where the terrain's colour is more sand than grass (scene.py blends over 0..-0.8 m)
CELL_M = 0.25
TILE_CELLS = 64  # 16 m


class Ground:
    """Painted a tile (TILE_CELLS x TILE_CELLS cells) at a time, when a footfall first lands on it: painting the
    whole town took 0.1 s of every world's start-up, and an episode walks on a few tiles."""

    def __init__(self, spec: WorldSpec, terrain: Terrain) -> None:
        self.spec = spec
        self.terrain = terrain
        x0, y0, x1, y1 = spec.bounds
        self.origin = (x0, y0)
        self.shape = (round((y1 - y0) / CELL_M) + 1, round((x1 - x0) / CELL_M) + 1)  # cells, rows by columns
        self._tiles: dict[tuple[int, int], np.ndarray] = {}

    def surface_at(self, x: float, y: float) -> str:
        if self.terrain.on_deck(x, y):
            return "wood"
        row = min(max(round((y - self.origin[1]) / CELL_M), 0), self.shape[0] - 1)
        col = min(max(round((x - self.origin[0]) / CELL_M), 0), self.shape[1] - 1)
        tile = self._tile(row // TILE_CELLS, col // TILE_CELLS)
        return SURFACES[int(tile[row % TILE_CELLS, col % TILE_CELLS])]

    def _tile(self, tile_row: int, tile_col: int) -> np.ndarray:
        tile = self._tiles.get((tile_row, tile_col))
        if tile is None:
            tile = self._tiles[tile_row, tile_col] = self._paint(tile_row * TILE_CELLS, tile_col * TILE_CELLS)
        return tile

    def _paint(self, row0: int, col0: int) -> np.ndarray:
        """The surfaces of the cells from (row0, col0), TILE_CELLS each way (those past the edge are never read)."""
        cells = np.arange(TILE_CELLS)
        xs, ys = np.meshgrid(self.origin[0] + (col0 + cells) * CELL_M, self.origin[1] + (row0 + cells) * CELL_M)
        code = {name: i for i, name in enumerate(SURFACES)}
        grid = np.where(_heights(self.terrain, xs, ys) < SAND_BELOW_M, code["sand"], code["grass"]).astype(np.uint8)
        for road in reversed(self.spec.roads):  # the first road listed wins where two overlap
            rows, cols = _box(xs, ys, np.array(road.points), road.width / 2)
            near = polyline_distance_grid(xs[rows, cols], ys[rows, cols], road.points) <= road.width / 2
            grid[rows, cols][near] = code[road.surface]
        for plaza in reversed(self.spec.plazas):
            rows, cols = _box(xs, ys, np.array([plaza.center]), plaza.radius)
            inside = np.hypot(xs[rows, cols] - plaza.center[0], ys[rows, cols] - plaza.center[1]) <= plaza.radius
            grid[rows, cols][inside] = code[plaza.surface]
        return grid


def _box(xs: np.ndarray, ys: np.ndarray, points: np.ndarray, margin: float) -> tuple[slice, slice]:
    """The grid rows and columns around some points (a road's, a plaza's centre), margin included."""
    (px0, py0), (px1, py1) = points.min(axis=0) - margin, points.max(axis=0) + margin
    cols = np.flatnonzero((xs[0] >= px0) & (xs[0] <= px1))
    rows = np.flatnonzero((ys[:, 0] >= py0) & (ys[:, 0] <= py1))
    if not len(cols) or not len(rows):
        return slice(0, 0), slice(0, 0)
    return slice(rows[0], rows[-1] + 1), slice(cols[0], cols[-1] + 1)


def _heights(terrain: Terrain, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Terrain.terrain_height over a grid at once (the same bilinear interpolation)."""
    fx = (np.clip(xs, -terrain.extent, terrain.extent) + terrain.extent) / terrain.spacing
    fy = (np.clip(ys, -terrain.extent, terrain.extent) + terrain.extent) / terrain.spacing
    col = np.minimum(fx.astype(int), terrain.count - 2)
    row = np.minimum(fy.astype(int), terrain.count - 2)
    tx, ty = fx - col, fy - row
    h = terrain.heights
    top = h[row, col] * (1 - tx) + h[row, col + 1] * tx
    bottom = h[row + 1, col] * (1 - tx) + h[row + 1, col + 1] * tx
    return top * (1 - ty) + bottom * ty
