"""`python main.py backend`: work on a backend file.

    python main.py backend new my_game --command "my_game --skip-intro"   # a first file, measured from its frames
    python main.py backend calibrate builtin            # measure how far sticks move the character; print it
    python main.py backend calibrate builtin --write    # ... and store it in the backend file
    python main.py backend calibrate minetest --start-state spawn --write
    python main.py backend record-start minetest spawn  # where the state puts the player: its check: block

`calibrate` runs the privileged driver on open flat ground (the backend's first start state unless
--start-state names another): each stick magnitude is held for each duration forward and back, and the
distances become the backend's `continuous_motion` table, which sets the continuous ineffective-move
threshold (a move that covered less than a share of the open-ground distance; docs/metrics.md).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import yaml

from core.backends.profile import BackendFileError, BackendProfile, load_backend, no_profile_message, parse_backend
from core.cli import backend_new, backend_start
from core.game.motion import DEFAULT_SHARE, MotionCalibration


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    calibrate = sub.add_parser("calibrate", help="measure the continuous-control motion table (privileged driver)")
    calibrate.add_argument("backend", help="a backend name or a backend file")
    calibrate.add_argument("--start-state", help="a start state on open flat ground (default: the backend's "
                                                 "calibration start, else its first start state)")
    calibrate.add_argument("--share", type=float, default=DEFAULT_SHARE,
                           help=f"a continuous move below this share of the open-ground distance is ineffective "
                                f"(default {DEFAULT_SHARE})")
    calibrate.add_argument("--write", action="store_true", help="store the table in the backend file")
    backend_new.add_arguments(sub.add_parser("new", help=backend_new.HELP, description=backend_new.__doc__,
                                             formatter_class=argparse.RawDescriptionHelpFormatter))
    backend_start.add_arguments(sub)


def run(args: argparse.Namespace) -> int:
    if args.action == "new":
        return backend_new.run(args)
    try:
        backend = load_backend(args.backend)
    except BackendFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.action == "record-start":
        return backend_start.run(backend, args)
    if not 0 < args.share < 1:
        print(f"error: --share must be between 0 and 1, got {args.share:g}", file=sys.stderr)
        return 2
    if not backend.has_memory_profile:  # the calibration measures moves by position: it needs ground truth
        print(f"error: {no_profile_message(backend)}", file=sys.stderr)
        return 2
    from core.backends.session import BackendSession
    from core.evaluation.calibrate import CalibrationError, calibrate_motion
    from core.game.errors import GameError

    start = args.start_state or _default_start(backend)
    dead_zone = backend.action_set().spec.continuous.dead_zone
    print(f"calibrating {backend.name} at start state {start!r} (privileged driver)")
    try:
        with BackendSession.open(backend, start_state=start) as session:
            session.prepare(start)
            assert session.evaluator is not None
            table = calibrate_motion(session.game, session.evaluator, start, float(dead_zone),
                                     settle_s=backend.step_settle_s, share=args.share,
                                     progress=lambda line: print(f"  {line}", flush=True))
    except (CalibrationError, GameError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    block = calibration_yaml(table)
    print(block, end="")
    if args.write:
        try:
            write_calibration(backend.path, block)
        except (OSError, BackendFileError) as exc:
            print(f"error: could not write {backend.path}: {exc}", file=sys.stderr)
            return 1
        print(f"written to {backend.path}")
    return 0


def _default_start(backend: BackendProfile) -> str:
    if backend.continuous_motion is not None and backend.continuous_motion.start_state:
        return backend.continuous_motion.start_state
    if backend.start_states:
        return backend.start_states[0]
    return "south_gate"  # the built-in town: Main Street runs straight and open north of the gate


def calibration_yaml(table: MotionCalibration) -> str:
    """The `continuous_motion` section as YAML, rows of the table on one line each."""
    data = table.model_dump()
    metres = data.pop("metres")
    head = yaml.safe_dump({"continuous_motion": data}, sort_keys=False, default_flow_style=None, width=120)
    rows = "".join(f"    - {yaml.safe_dump(row, default_flow_style=True).strip()}\n" for row in metres)
    return ("# How far sticks move the character on open flat ground (metres[i][j]: magnitudes[i] held seconds[j]);\n"
            "# the continuous ineffective-move threshold is `share` of it (docs/metrics.md).\n"
            + head + "  metres:\n" + rows)


def write_calibration(path: Path, block: str) -> None:
    """Replace the file's `continuous_motion` section (and its comment) with `block`, keeping the rest as it was;
    the result is validated before it is written."""
    text = path.read_text(encoding="utf-8")
    pattern = re.compile(r"(?m)^(?:# How far sticks move.*\n(?:#.*\n)*)?continuous_motion:.*\n(?:[ \t]+.*\n|\n)*")
    text = pattern.sub("", text)
    text = text.rstrip("\n") + "\n" + block
    parse_backend(text, path)
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)
