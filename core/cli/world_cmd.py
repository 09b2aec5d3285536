"""`python main.py world`: run a game as its own process, for attaching to it.

    python main.py world                          # the built-in world; prints a connection file
    python main.py world --renderer software --mode realtime --width 1280 --height 720
    python main.py world --backend minetest       # Minetest under its backend's lifecycle (our Xvfb if no display)
    python main.py world --backend my_game.yaml --start spawn

The built-in world's own options (--world FILE, --width, --height, --mode lockstep|realtime,
--renderer auto|software|hardware) are passed to its program unchanged: `python -m core.world --help`
describes them. This command becomes that process (exec), so the harness never imports the world's code.

For an external game this prints its pid and X display, keeps it running until Ctrl+C, and then ends
exactly the processes it started (the game, its children, our Xvfb). Attach with
`python main.py scan --pid PID ...`, or drive the same display by hand (DISPLAY=:N).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

from core.paths import PROJECT_ROOT


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", default="builtin", metavar="NAME|PATH",
                        help="builtin (default), minetest, ryujinx, or a backend file (docs/backend-format.md)")
    parser.add_argument("--start", help="external games: the start state to launch into (default: the backend's)")
    # main.py hands every option it does not know here: the built-in world's, parsed by the world process.
    parser.set_defaults(passed_through=[])


def run(args: argparse.Namespace) -> int:
    if args.backend != "builtin":
        if args.passed_through:
            print(f"error: {' '.join(args.passed_through)}: options of the built-in world; an external game's size "
                  "and launch come from its backend file", file=sys.stderr)
            return 2
        return _run_external(args)
    if args.start:
        print("error: --start is for external games; the built-in world starts at its default state",
              file=sys.stderr)
        return 2
    return _become_world(args.passed_through)


def _become_world(options: list[str]) -> int:
    """Replace this process with `python -m core.world OPTIONS`: same pid, same terminal, same signals."""
    command = [sys.executable, "-m", "core.world", *options]
    env = dict(os.environ)
    # -m finds core.world from the project root; relative paths in OPTIONS stay relative to the caller's folder.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PROJECT_ROOT), env.get("PYTHONPATH", "")) if p)
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "posix":
        os.execve(sys.executable, command, env)
    return subprocess.call(command, env=env)  # Windows has no true exec: wait for the world instead

def _run_external(args: argparse.Namespace) -> int:
    import signal
    import threading

    from core.backends.profile import BackendFileError, load_backend, memory_profile_of
    from core.evaluation.profile import ProfileError
    from core.game.errors import GameError
    from core.game.external.game import ExternalGame

    try:
        backend = load_backend(args.backend)
        if backend.kind == "builtin":
            print("error: that backend is the built-in world; run without --backend", file=sys.stderr)
            return 2
        assert backend.external is not None
        profile = memory_profile_of(backend)
        expect = profile.game_version if profile else None
        game = ExternalGame.launch(backend.external, backend.name, backend.directory, start_state=args.start,
                                   version_expect=expect)
    except (BackendFileError, ProfileError, GameError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda _signal, _frame: stop.set())
    with game:
        print(f"READY {backend.name} pid {game.pid} display {game.display or '-'} window "
              f"{game.window.window_id if game.window else '-'} ({game.width}x{game.height} frames, "
              f"input: {game.input_description})", flush=True)
        # The game's own files (its home, its log, what it printed) live there: a user reading a position off the
        # game's log needs the folder, which is made fresh for every launch.
        print(f"runtime folder {game.runtime_dir} (the backend's {{runtime}}: the game's home and log, and "
              f"game-output-N.log, what it printed)", flush=True)
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
