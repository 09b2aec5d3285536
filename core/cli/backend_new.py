"""`python main.py backend new NAME`: a first backend file for a game, measured from its frames.

    python main.py backend new my_game --command "/usr/games/my_game --skip-intro"        # under our own Xvfb
    python main.py backend new my_game --command "my_game" --display :0 --fov 90           # on your display
    python main.py backend new my_game --attach 4242 --display :0                          # a game already running

It starts the game (or attaches to it), lists the windows and picks the game's (the largest of its process tree;
--window REGEX to choose), presses each candidate key and moves the mouse through XTEST, compares the frames before
and after, and writes NAME.yaml (memory_profile: none) with every value commented with how it was measured.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.scaffold.measure import KEY_CANDIDATES

HELP = "measure a running game's keys, mouse look and timing; write a backend file"


def add_arguments(new: argparse.ArgumentParser) -> None:
    """The options of `backend new` (its parser is made by core/cli/backend_cmd.py)."""
    new.add_argument("name", help="the backend's name (lowercase letters, digits, _): the file is NAME.yaml")
    how = new.add_mutually_exclusive_group(required=True)
    how.add_argument("--command", help="the command line that starts the game (it is started as our child)")
    how.add_argument("--attach", type=int, metavar="PID", help="a running game's pid (left running)")
    new.add_argument("--display", help="the X display to use (default: our own Xvfb for --command, $DISPLAY for "
                                       "--attach)")
    new.add_argument("--window", metavar="REGEX", help="the game's window, by title (default: the largest window of "
                                                       "the game's processes)")
    new.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                     help="an environment variable for the game (repeatable; written into the file)")
    new.add_argument("--fov", type=float, metavar="DEG", help="the game's field of view, to turn mouse motion into "
                                                             "degrees (default: 90 assumed, and said so)")
    new.add_argument("--fov-vertical", action="store_true", help="--fov is the vertical field of view")
    new.add_argument("--keys", default=",".join(KEY_CANDIDATES),
                     help=f"the keys to try, X keysym names (default: {','.join(KEY_CANDIDATES)})")
    new.add_argument("--screen", default="1280x800x24", help="our own Xvfb's screen (default 1280x800x24)")
    new.add_argument("--timeout", type=float, default=90.0, help="seconds to wait for the game's window and a "
                                                                 "still picture (default 90)")
    new.add_argument("--out", type=Path, help="where to write the file (default: ./NAME.yaml; its name must be "
                                              "NAME.yaml)")


def run(args: argparse.Namespace) -> int:
    import re

    from core.scaffold.errors import ScaffoldError
    from core.scaffold.scaffold import Options, scaffold

    if not re.fullmatch(r"[a-z0-9_]+", args.name):
        print(f"error: the name {args.name!r} must be lowercase letters, digits and _ (it names the file)",
              file=sys.stderr)
        return 2
    out: Path = args.out or Path(f"{args.name}.yaml")
    if out.stem != args.name or out.suffix != ".yaml":
        print(f"error: --out {out} must be a file named {args.name}.yaml (a backend's name is its file's)",
              file=sys.stderr)
        return 2
    env: list[tuple[str, str]] = []
    for item in args.env:
        key, sep, value = str(item).partition("=")
        if not sep or not key:
            print(f"error: --env {item!r} must be NAME=VALUE", file=sys.stderr)
            return 2
        env.append((key, value))
    if args.fov is not None and not 1 <= args.fov < 180:
        print(f"error: --fov must be between 1 and 180 degrees, got {args.fov:g}", file=sys.stderr)
        return 2
    keys = tuple(k.strip() for k in str(args.keys).split(",") if k.strip())
    options = Options(args.name, out.resolve(), args.command, args.attach, args.display, args.window, tuple(env),
                      args.fov, args.fov_vertical, args.screen, args.timeout, keys)
    try:
        outcome = scaffold(options, lambda line: print(line, flush=True))
    except ScaffoldError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted: the game was ended and nothing was written", file=sys.stderr)
        return 130
    print(f"wrote {outcome.path} (memory_profile: none)")
    print("check by eye:")
    for line in outcome.checks:
        print(f"  - {line}")
    print("next:")
    print(f"  python main.py world --backend {outcome.path}                      # see that it starts")
    print(f"  python main.py memory find-position --backend {outcome.path}       # find where the game keeps the "
          "player's position (docs/finding-memory.md)")
    return 0
