"""A route planner for task authors (privileged: it reads the world's collision data).

    python -m core.world.route_planner --start plaza --to 56,64 [--to ...] [--flags pier_gate_open]

It prints waypoints that walk around every obstacle, for a task file's `reference_route`. It is a
development tool: the scripted driver only follows the waypoints written in the task file.
"""

from __future__ import annotations

import argparse
import heapq
import math
import sys
from typing import cast

import numpy as np

from core.paths import DEFAULT_WORLD
from core.world.content import WorldSpec, load_world
from core.world.layout import Layout, build_layout

CELL = 0.5
CLEARANCE = 0.2  # beyond the character's radius


class Planner:
    def __init__(self, spec: WorldSpec, layout: Layout, flags: int = 0) -> None:
        self.spec, self.layout = spec, layout
        x0, y0, x1, y1 = spec.bounds
        self.origin = (x0, y0)
        self.cols, self.rows = int((x1 - x0) / CELL) + 1, int((y1 - y0) / CELL) + 1
        radius = spec.character.radius + CLEARANCE
        self.free = np.zeros((self.rows, self.cols), bool)
        for row in range(self.rows):
            for col in range(self.cols):
                self.free[row, col] = self._free(*self.point(row, col), radius, flags)

    def point(self, row: int, col: int) -> tuple[float, float]:
        return self.origin[0] + col * CELL, self.origin[1] + row * CELL

    def cell(self, x: float, y: float) -> tuple[int, int]:
        return round((y - self.origin[1]) / CELL), round((x - self.origin[0]) / CELL)

    def _free(self, x: float, y: float, radius: float, flags: int) -> bool:
        deck = self.layout.terrain.on_deck(x, y)
        for obstacle in self.layout.collision.nearby(x, y, radius + 1.0):
            if obstacle.open_flag is not None and flags >> obstacle.open_flag & 1:
                continue
            if obstacle.kind == "water" and deck:
                continue
            if obstacle.push_out(x, y, radius) is not None:
                return False
        return True

    def _nearest_free(self, row: int, col: int) -> tuple[int, int]:
        best, best_d = (row, col), math.inf
        for r in range(max(0, row - 6), min(self.rows, row + 7)):
            for c in range(max(0, col - 6), min(self.cols, col + 7)):
                if self.free[r, c] and (r - row) ** 2 + (c - col) ** 2 < best_d:
                    best, best_d = (r, c), (r - row) ** 2 + (c - col) ** 2
        return best

    def path(self, start: tuple[float, float], goal: tuple[float, float]) -> list[tuple[float, float]]:
        s = self._nearest_free(*self.cell(*start))
        g = self._nearest_free(*self.cell(*goal))
        frontier = [(0.0, s)]
        came: dict[tuple[int, int], tuple[int, int] | None] = {s: None}
        cost = {s: 0.0}
        steps = [(dr, dc, math.hypot(dr, dc)) for dr in (-1, 0, 1) for dc in (-1, 0, 1) if dr or dc]
        while frontier:
            _, current = heapq.heappop(frontier)
            if current == g:
                break
            for dr, dc, length in steps:
                nxt = (current[0] + dr, current[1] + dc)
                if not (0 <= nxt[0] < self.rows and 0 <= nxt[1] < self.cols) or not self.free[nxt]:
                    continue
                new_cost = cost[current] + length
                if new_cost < cost.get(nxt, math.inf):
                    cost[nxt] = new_cost
                    came[nxt] = current
                    heapq.heappush(frontier, (new_cost + math.hypot(g[0] - nxt[0], g[1] - nxt[1]), nxt))
        if g not in came:
            raise ValueError(f"no route from {start} to {goal}")
        cells: list[tuple[int, int]] = []
        node: tuple[int, int] | None = g
        while node is not None:
            cells.append(node)
            node = came[node]
        cells.reverse()
        return [*self._simplify([self.point(*c) for c in cells]), goal]

    def _visible(self, a: tuple[float, float], b: tuple[float, float]) -> bool:
        steps = max(1, int(math.hypot(b[0] - a[0], b[1] - a[1]) / (CELL / 2)))
        for i in range(steps + 1):
            t = i / steps
            row, col = self.cell(a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t)
            if not self.free[row, col]:
                return False
        return True

    def _simplify(self, points: list[tuple[float, float]]) -> list[tuple[float, float]]:
        out = [points[0]]
        i = 0
        while i < len(points) - 1:
            j = len(points) - 1
            while j > i + 1 and not self._visible(points[i], points[j]):
                j -= 1
            out.append(points[j])
            i = j
        return out[1:-1]


def _point(text: str) -> tuple[float, float]:
    # "x,y" as typed, not checked here: another count of numbers fails in Planner.path
    return cast("tuple[float, float]", tuple(float(v) for v in text.split(",")))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--start", required=True, help="a start state name, or x,y")
    parser.add_argument("--to", action="append", required=True, help="x,y (repeat for several legs)")
    parser.add_argument("--flags", default="", help="comma-separated flags already set (open gates)")
    args = parser.parse_args(argv)
    spec = load_world(DEFAULT_WORLD)
    bits = {n: i for i, n in enumerate(spec.flags)}
    flags = sum(1 << bits[f] for f in args.flags.split(",") if f)
    planner = Planner(spec, build_layout(spec), flags)
    position = spec.start_states[args.start].pos if args.start in spec.start_states else _point(args.start)
    for target in args.to:
        goal = _point(target)
        for x, y in planner.path(position, goal):
            print(f"- goto: [{x:.1f}, {y:.1f}]")
        position = goal
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
