"""`python main.py memory`: find where a game keeps its state, read-only, and write a profile.

Value scans (Cheat Engine's first and next scans), kept in a session folder between calls:
    python main.py memory scan --pid PID --session s --type f32 --unknown
    python main.py memory next --session s --op changed            # or unchanged, increased, decreased,
    python main.py memory next --session s --op increased-by --value 10 --tolerance 0.5   # equal, between
    python main.py memory undo --session s
    python main.py memory list --session s --show 20

Driving the game with our own pad (docs/finding-memory.md):
    python main.py memory find-position --backend builtin --json    # or --backend minetest, or a backend file
    python main.py memory find-flag --pid PID                      # mark interactions as they happen
    python main.py memory signature --backend minetest --out my_game.yaml --scale 0.1 --units nodes
    python main.py memory verify --profile my_game.yaml --backend minetest --restarts 2
    python main.py memory pointers --backend builtin --out my_game_pointers.yaml

Nothing here writes into the game: reads only, through process_vm_readv or /proc/PID/mem.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from core.memory.regions import MemoryAccessError
from core.memory.scanner import RegionFilter
from core.memory.values import NEXT_OPS, TYPE_NAMES, Condition, ScanValueError, typed_tolerance, value_type


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from core.cli import memory_find_cmd

    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    first = sub.add_parser("scan", help="first scan: an exact value, a range, or an unknown initial value")
    first.add_argument("--pid", type=int, required=True, help="the game's process id")
    first.add_argument("--session", type=Path, required=True, help="folder that keeps the scan between calls")
    first.add_argument("--type", choices=TYPE_NAMES, default="f32", help="value type (default f32)")
    kind = first.add_mutually_exclusive_group(required=True)
    kind.add_argument("--value", help="exact value (floats match to the typed precision unless --tolerance)")
    kind.add_argument("--range", nargs=2, metavar=("LOW", "HIGH"), help="every value in [LOW, HIGH]")
    kind.add_argument("--unknown", action="store_true", help="unknown initial value: snapshot everything")
    first.add_argument("--tolerance", type=float, help="for --value: match within this much")
    first.add_argument("--unaligned", action="store_true", help="look at every byte offset, not just aligned ones")
    _region_options(first)
    _output_options(first)
    nxt = sub.add_parser("next", help="next scan: narrow the candidates down")
    nxt.add_argument("--session", type=Path, required=True)
    nxt.add_argument("--op", required=True, choices=[op.replace("_", "-") for op in NEXT_OPS])
    nxt.add_argument("--value", help="for increased-by, decreased-by, equal; the lower bound for between")
    nxt.add_argument("--upper", help="the upper bound for between")
    nxt.add_argument("--tolerance", type=float, help="for increased-by, decreased-by and equal")
    nxt.add_argument("--against-first", action="store_true", help="compare with the first scan, not the last")
    _output_options(nxt)
    undo = sub.add_parser("undo", help="go back to the candidates before the last next scan")
    undo.add_argument("--session", type=Path, required=True)
    _output_options(undo)
    listing = sub.add_parser("list", help="the candidates, with their values at the last scan and now")
    listing.add_argument("--session", type=Path, required=True)
    _output_options(listing)
    memory_find_cmd.add_subcommands(sub)


def _region_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--perms", default="rw", help="permission letters every region must have (default rw)")
    parser.add_argument("--path-contains", help="only regions whose mapping path contains this (e.g. /dev/shm)")


def _output_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--show", type=int, default=20, help="candidates to print (default 20)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def fail(message: str, code: int = 2) -> int:
    print(f"error: {message}", file=sys.stderr)
    return code


def run(args: argparse.Namespace) -> int:
    from core.cli import memory_find_cmd
    from core.finder.backends import BackendError
    from core.finder.motion import FinderCancelled, FinderError
    from core.game.errors import GameError
    from core.memory.scan_session import SessionError

    handlers = {"scan": _first, "next": _next, "undo": _undo, "list": _list}
    handler = handlers.get(args.action) or memory_find_cmd.HANDLERS[args.action]
    try:
        return int(handler(args))
    except (ScanValueError, SessionError, BackendError, FinderError) as exc:
        return fail(str(exc))
    except GameError as exc:  # the game could not start, died, or refused a request
        return fail(str(exc), 4)
    except ProcessLookupError as exc:
        return fail(f"{exc}" if str(exc) else "the game process has exited")
    except MemoryAccessError as exc:
        return fail(str(exc), 3)
    except OSError as exc:  # the session folder or a spill file: not the game
        return fail(f"{exc.filename or ''}: {exc.strerror or exc}")
    except FinderCancelled:
        return fail("cancelled", 130)


def _open(pid: int) -> Any:
    from core.memory.readers import open_reader

    return open_reader(pid)


def _first(args: argparse.Namespace) -> int:
    from core.memory.scan_session import save
    from core.memory.valuescan import ValueScan

    vtype = value_type(args.type)
    if args.unknown:
        condition = Condition("unknown")
    elif args.range:
        condition = Condition("range", vtype.parse(args.range[0]), vtype.parse(args.range[1]))
    else:
        tolerance = args.tolerance if args.tolerance is not None else (
            typed_tolerance(args.value) if vtype.is_float else 0.0)
        condition = Condition("exact", vtype.parse(args.value), tolerance=tolerance)
    reader = _open(args.pid)
    reader.regions()  # a process we may not read is refused here, before anything is written
    if args.session.exists() and any(args.session.iterdir()) and not (args.session / "session.json").exists():
        return fail(f"{args.session} is not empty and holds no scan session: choose a new folder")
    scan = ValueScan(reader, vtype, aligned=not args.unaligned,
                     region_filter=RegionFilter(perms=args.perms, path_contains=args.path_contains),
                     workspace=args.session)
    try:
        count = scan.first_scan(condition)
        history = [f"first scan: {condition.describe()} → {count}"]
        save(scan, args.session, history)
        return _report(args, scan, history)
    finally:
        scan.close()


def _next(args: argparse.Namespace) -> int:
    from core.memory.scan_session import load, save

    scan, history = load(args.session, _open)
    try:
        vtype = scan.vtype
        op = args.op.replace("-", "_")
        value = vtype.parse(args.value) if args.value is not None else None
        upper = vtype.parse(args.upper) if args.upper is not None else None
        tolerance = args.tolerance if args.tolerance is not None else (
            typed_tolerance(args.value) if vtype.is_float and op == "equal" and args.value else 0.0)
        condition = Condition(op, value, upper, tolerance, args.against_first)
        count = scan.next_scan(condition)
        history.append(f"next scan: {condition.describe()} → {count}")
        save(scan, args.session, history)
        return _report(args, scan, history)
    finally:
        scan.close()


def _undo(args: argparse.Namespace) -> int:
    from core.memory.scan_session import load, save

    scan, history = load(args.session, _open)
    try:
        count = scan.undo()
        history.append(f"undo → {count}")
        save(scan, args.session, history)
        return _report(args, scan, history)
    finally:
        scan.close()


def _list(args: argparse.Namespace) -> int:
    from core.memory.scan_session import load

    scan, history = load(args.session, _open)
    try:
        return _report(args, scan, history)
    finally:
        scan.close()


def _report(args: argparse.Namespace, scan: Any, history: list[str]) -> int:
    shown = list(scan.candidates(limit=args.show))
    now = scan.read_now([address for address, _ in shown])
    if args.json:
        print(json.dumps({
            "pid": scan.reader.pid, "type": scan.vtype.name, "count": scan.count, "history": history,
            "can_undo": scan.previous is not None,
            "candidates": [{"address": a, "address_hex": f"{a:#x}", "value": v, "now": n}
                           for (a, v), n in zip(shown, now)],
        }))
        return 0
    for line in history:
        print(line)
    print(f"{scan.count} candidate(s) of type {scan.vtype.name} in process {scan.reader.pid}")
    for (address, value), current in zip(shown, now):
        print(f"  {address:#014x}  {value!r:>24}  now {current!r}")
    if scan.count > len(shown):
        print(f"  ... {scan.count - len(shown)} more (--show N)")
    return 0
