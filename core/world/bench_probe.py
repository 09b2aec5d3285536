"""`python -m core.world.bench_probe`: measurements that must run inside a world process.

Prints one JSON object: frame production rate on a street view, and the bare render rate of an
empty scene at the same size (the baseline).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from core.game.pad import PadState
from core.paths import DEFAULT_WORLD
from core.world.content import load_world
from core.world.game import World

WALK = PadState(left_y=1.0, right_x=0.25)


def _bare_fps(world: World, frames: int) -> float:
    render = world.renderer.base.render
    hidden = [child for child in render.getChildren() if not child.isHidden()]
    for child in hidden:
        child.hide()
    started = time.perf_counter()
    for _ in range(frames):
        world.renderer.base.graphicsEngine.renderFrame()
        world.renderer.read_back()
    elapsed = time.perf_counter() - started
    for child in hidden:
        child.show()
    return frames / elapsed


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--width", type=int, default=640)
    parser.add_argument("--height", type=int, default=360)
    parser.add_argument("--frames", type=int, default=300)
    parser.add_argument("--start", default="south_gate")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        # Silent: these figures are the renderer's (`bench world` measures sound on its own, against a silent world).
        world = World(load_world(DEFAULT_WORLD), Path(folder) / "frames.bin", args.width, args.height, "software",
                      audio=False)
        result: dict[str, float] = {}
        world.reset(args.start)
        for _ in range(20):  # warm caches
            world.tick(WALK)
            world.publish()
        world.reset(args.start)
        started = time.perf_counter()
        for _ in range(args.frames):
            world.tick(WALK)
            world.publish()
        result["render_fps"] = args.frames / (time.perf_counter() - started)
        result["bare_fps"] = _bare_fps(world, args.frames)
        world.close()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
