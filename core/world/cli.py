"""The world process's command line: `python -m core.world` (what `python main.py world` becomes).

    python -m core.world                              # the built-in world, lockstep; prints a connection file
    python -m core.world --mode realtime --renderer software --width 1280 --height 720
    python -m core.world --audio off                  # no sound (no audio ring, no synthesis)

The harness launches it the same way (core/game/builtin.py), adding --runtime-dir and --owner-pid. The parser
lives here, inside the world package, so that only the world process ever imports core.world (an import-linter
contract in pyproject.toml): `python main.py world` replaces itself with this program rather than importing it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.game.frames import check_resolution
from core.paths import DEFAULT_WORLD


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m core.world", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--world", type=Path, default=DEFAULT_WORLD, help="world file (default: %(default)s)")
    parser.add_argument("--width", type=int, default=640, help="frame width in pixels (default 640)")
    parser.add_argument("--height", type=int, default=360, help="frame height in pixels (default 360)")
    parser.add_argument("--mode", choices=["lockstep", "realtime"], default="lockstep",
                        help="lockstep: time moves only on request (benchmarks); realtime: 30 ticks/s (humans)")
    parser.add_argument("--renderer", choices=["auto", "software", "hardware"], default="auto",
                        help="software = Panda3D tinydisplay; hardware = OpenGL; auto = OpenGL only if a GPU is found")
    parser.add_argument("--audio", choices=["on", "off"], default="on",
                        help="on: the world's sound goes to an audio ring beside the frames (docs/audio-ring.md)")
    parser.add_argument("--runtime-dir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--owner-pid", type=int, help=argparse.SUPPRESS)
    return parser


def run(args: argparse.Namespace) -> int:
    from core.world.content import WorldFileError, load_world

    try:
        check_resolution(args.width, args.height)
        spec = load_world(args.world)
    except (ValueError, WorldFileError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from core.world.server import run as serve

    return serve(spec, runtime_dir=args.runtime_dir, owner_pid=args.owner_pid, width=args.width,
                 height=args.height, mode=args.mode, renderer=args.renderer, audio=args.audio == "on")


def main(argv: list[str]) -> int:
    return run(build_parser().parse_args(argv))
