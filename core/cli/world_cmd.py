"""`python main.py world`: run a game as its own process, for attaching to it.

    python main.py world                          # the built-in world; prints a connection file
    python main.py world --backend minetest       # Minetest under its backend's lifecycle (our Xvfb if no display)
    python main.py world --backend my_game.yaml --start spawn

For an external game this prints its pid and X display, keeps it running until Ctrl+C, and then ends
exactly the processes it started (the game, its children, our Xvfb). Attach with
`python main.py scan --pid PID ...`, or drive the same display by hand (DISPLAY=:N).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.paths import DEFAULT_WORLD


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", default="builtin", metavar="NAME|PATH",
                        help="builtin (default), minetest, ryujinx, or a backend file (docs/backend-format.md)")
    parser.add_argument("--start", help="external games: the start state to launch into (default: the backend's)")
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
    if args.backend != "builtin":
        return _run_external(args)
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


def _run_external(args: argparse.Namespace) -> int:
    import signal
    import threading

    from core.backends.profile import BackendFileError, load_backend
    from core.evaluation.profile import ProfileError, load_profile
    from core.game.errors import GameError
    from core.game.external.game import ExternalGame

    try:
        backend = load_backend(args.backend)
        if backend.kind == "builtin":
            print("error: that backend is the built-in world; run without --backend", file=sys.stderr)
            return 2
        assert backend.external is not None
        expect = load_profile(backend.memory_profile_path).game_version
        game = ExternalGame.launch(backend.external, backend.name, backend.directory, start_state=args.start,
                                   version_expect=expect)
    except (BackendFileError, ProfileError, GameError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with game:
        print(f"READY {backend.name} pid {game.pid} display {game.display or '-'} window "
              f"{game.window.window_id if game.window else '-'} ({game.width}x{game.height} frames, "
              f"input: {game.input_description})", flush=True)
        print("Ctrl+C ends the game and everything started for it.", flush=True)
        try:
            while not stop.wait(1.0):
                game.latest_frame()  # notices a game that exits or hangs
        except KeyboardInterrupt:
            pass
        except GameError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    return 0
