"""`python main.py world`: run the built-in world as its own process."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.paths import DEFAULT_WORLD


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--world", type=Path, default=DEFAULT_WORLD, help="world file (default: %(default)s)")
    parser.add_argument("--width", type=int, default=640, help="frame width in pixels (default 640)")
    parser.add_argument("--height", type=int, default=360, help="frame height in pixels (default 360)")
    parser.add_argument("--mode", choices=["lockstep", "realtime"], default="lockstep",
                        help="lockstep: time moves only on request (benchmarks); realtime: 30 ticks/s (humans)")
    parser.add_argument("--renderer", choices=["auto", "software", "hardware"], default="auto",
                        help="software = Panda3D tinydisplay; hardware = OpenGL; auto = OpenGL only if a GPU is found")
    parser.add_argument("--runtime-dir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--owner-pid", type=int, help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    from core.game.frames import check_resolution
    from core.world.content import WorldFileError, load_world

    try:
        check_resolution(args.width, args.height)
        spec = load_world(args.world)
    except (ValueError, WorldFileError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from core.world.server import run as serve

    return serve(spec, runtime_dir=args.runtime_dir, owner_pid=args.owner_pid, width=args.width,
                 height=args.height, mode=args.mode, renderer=args.renderer)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.world", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))
