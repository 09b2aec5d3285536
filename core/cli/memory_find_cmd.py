"""The `memory` subcommands that drive the game: find-position, find-flag, signature, verify, pointers.

They start the game through its backend (`--backend builtin`, `--backend minetest`, or a backend
file's path: core/finder/backends.py), restarting it through the backend's lifecycle when they need
fresh processes, or attach to a built-in world already running (`--attach CONNECTION_FILE`, printed
by `python main.py world`).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import sys
import time
from collections.abc import Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.memory.scanner import RegionFilter

if TYPE_CHECKING:
    from core.finder.motion import MotionPlan


def add_subcommands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:  # pyright: ignore[reportPrivateUsage]  # argparse has no public name for it
    position = sub.add_parser("find-position", help="move the player and rank where the position lives")
    _game_options(position)
    position.add_argument("--typed", help="coordinates read off the screen, e.g. '12.5,4.6,-40' ('' to skip one)")
    position.add_argument("--scale", type=float, default=1.0, help="memory holds typed value × this (Minetest: 10)")
    position.add_argument("--rounds", type=int, default=3, help="rounds of movement after the first (default 3)")
    position.add_argument("--top", type=int, default=10, help="candidates to print (default 10)")
    _region_options(position)
    position.add_argument("--json", action="store_true")
    flag = sub.add_parser("find-flag", help="bytes that change only when you mark an interaction (interactive)")
    flag.add_argument("--pid", type=int, required=True, help="the game's process id (you play it meanwhile)")
    flag.add_argument("--top", type=int, default=10)
    _region_options(flag)
    flag.add_argument("--json", action="store_true", help="print the final results as JSON")
    signature = sub.add_parser("signature", help="find the position in 2+ processes, build and verify a signature")
    _game_options(signature, attach=False)
    signature.add_argument("--out", type=Path, required=True, help="profile YAML to write")
    signature.add_argument("--name", help="profile name (default: the file name)")
    signature.add_argument("--game-version", help="the game build this is for (default: the backend's)")
    signature.add_argument("--processes", type=int, default=2, help="processes to build from (default 2)")
    signature.add_argument("--verify", type=int, default=2, help="fresh processes to verify on (default 2)")
    signature.add_argument("--scale", type=float, default=1.0, help="sample = stored value × scale (Minetest: 0.1)")
    signature.add_argument("--units", help="what the scaled position is in (m, nodes, ...)")
    signature.add_argument("--flag-offset", type=int, help="flags word, bytes from the position (from find-flag)")
    signature.add_argument("--flag-type", choices=("flags64", "flags32"), default="flags64")
    signature.add_argument("--flag-names", help="comma-separated names, bit 0 first")
    _region_options(signature)
    signature.add_argument("--json", action="store_true")
    verify = sub.add_parser("verify", help="restart the game and check that a profile finds and follows the player")
    verify.add_argument("--profile", type=Path, required=True)
    _game_options(verify, attach=False)
    verify.add_argument("--restarts", type=int, default=1, help="fresh processes to check (default 1)")
    verify.add_argument("--json", action="store_true")
    pointers = sub.add_parser("pointers", help="static pointer chains to the position that survive restarts")
    _game_options(pointers, attach=False)
    pointers.add_argument("--depth", type=int, default=4, help="most pointers in a chain (default 4)")
    pointers.add_argument("--max-offset", type=lambda s: int(s, 0), default=0x1000, help="default 0x1000")
    pointers.add_argument("--fresh", type=int, default=2, help="fresh processes a chain must resolve in")
    pointers.add_argument("--out", type=Path, help="write a profile using the best surviving chain")
    pointers.add_argument("--name", help="profile name (default: the file name)")
    _region_options(pointers)
    pointers.add_argument("--json", action="store_true")


def _game_options(parser: argparse.ArgumentParser, attach: bool = True) -> None:
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--backend", help="a backend name (builtin, minetest, ...) or a backend file (.yaml)")
    if attach:
        group.add_argument("--attach", type=Path, help="connection file of a running `python main.py world`")
    parser.add_argument("--start", help="start state of every fresh process (default: the backend's; builtin: plaza)")


def _region_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--perms", default="rw", help="permission letters every region must have (default rw)")
    parser.add_argument("--path-contains", help="only regions whose mapping path contains this")


def _filter(args: argparse.Namespace) -> RegionFilter:
    return RegionFilter(perms=args.perms, path_contains=args.path_contains)


def _progress(args: argparse.Namespace) -> Callable[[str, float, int], None]:
    def show(what: str, fraction: float, candidates: int) -> None:
        if not args.json:
            extra = f"  {candidates} candidate(s)" if candidates else ""
            print(f"  [{fraction:4.0%}] {what}{extra}", file=sys.stderr, flush=True)

    return show


@contextlib.contextmanager
def _open_game(args: argparse.Namespace) -> Generator[tuple[Any, MotionPlan], None, None]:
    """The game to drive, attached to or launched through its backend (and ended afterwards), with the
    backend's protocol timings (an external backend's `step_settle_s` lengthens the rest after each step)."""
    from core.finder.motion import MotionPlan

    if getattr(args, "attach", None) is not None:
        from core.game.builtin import BuiltinWorld

        world = BuiltinWorld.attach(args.attach)
        try:
            yield world, MotionPlan()
        finally:
            world.close()
        return
    from core.finder.backends import resolve

    with resolve(args.backend, args.start) as backend:
        _progress(args)(f"starting {backend.game}", 0.0, 0)
        game = backend.launch()
        try:
            yield game, backend.plan
        finally:
            game.close()


def _find_position(args: argparse.Namespace) -> int:
    from core.finder.position import FinderOptions, PositionFinder, Typed

    typed = None
    if args.typed is not None:
        from core.memory.values import ScanValueError, typed_tolerance

        parts = [p.strip() for p in args.typed.split(",")]
        if len(parts) != 3 or not any(parts):
            raise ScanValueError("--typed takes three comma-separated values (leave one empty to skip it)")
        try:
            first, second, third = (float(p) if p else None for p in parts)  # three: checked above
        except ValueError:
            raise ScanValueError(f"--typed {args.typed!r}: each value must be a number") from None
        tolerance = max(typed_tolerance(p) for p in parts if p)
        typed = Typed((first, second, third), tolerance, args.scale)
    with _open_game(args) as (game, plan):
        options = FinderOptions(plan=dataclasses.replace(plan, rounds=args.rounds), region_filter=_filter(args),
                                top=args.top)
        finder = PositionFinder(game, options=options)
        try:
            result = finder.run(_progress(args), typed=typed)
        finally:
            finder.close()
    if args.json:
        print(json.dumps({"pid": game.pid, **result.to_json()}))
        return 0
    print(f"{len(result.candidates)} candidate position(s) in process {game.pid}, {result.seconds:.1f} s:")
    for index, c in enumerate(result.candidates, 1):
        values = ", ".join(f"{v:.3f}" for v in c.values)
        print(f"  {index:2d}. {c.address:#014x}  ({values})  {c.up} up  score {c.score:.3f}  "
              f"{c.speed:.2f} units/s  {c.copies} copies  lead {c.lead:.2f}")
    if result.warning:
        print(f"WARNING: {result.warning}")
    return 0


def _find_flag(args: argparse.Namespace) -> int:
    from core.finder.flags import FlagFinder
    from core.memory.readers import open_reader

    reader = open_reader(args.pid)
    finder = FlagFinder(reader, _filter(args))
    def say(text: str) -> None:  # to stderr, also with --json: the answers scripts wait on before playing on
        print(text, file=sys.stderr, flush=True)

    try:
        total = finder.start()
        say(f"watching {total / 2**20:.0f} MiB of process {args.pid}. Play without interacting, then press Enter "
            "(an idle round); right after an interaction type `h NAME` and Enter; `r` shows results, `q` ends.")
        for line in sys.stdin:
            command = line.strip()
            if command in ("q", "quit", "exit"):
                break
            if command in ("", "i", "idle"):
                say(f"idle round {finder.idle_rounds + 1}: {finder.idle()} candidate byte(s) left")
            elif command.split()[0] in ("h", "happened"):
                label = command.split(maxsplit=1)[1] if len(command.split()) > 1 else None
                say(f"marked: {finder.happened(label)} candidate byte(s) changed at marks and never while idle")
            elif command in ("r", "results"):
                _print_flags(finder.results(args.top), say)
            else:
                say(f"unknown command {command!r}: Enter, `h NAME`, `r` or `q`")
        results = finder.results(args.top)
        if args.json:
            print(json.dumps({"pid": args.pid, "marks": finder.labels, "idle_rounds": finder.idle_rounds,
                              "candidates": [c.to_json() | {"field": c.field()} for c in results]}))
        else:
            _print_flags(results, print)
        return 0
    finally:
        finder.close()
        reader.close()


def _print_flags(results: list[Any], say: Callable[[str], None]) -> None:
    for index, c in enumerate(results, 1):
        field = c.field()
        bits = ", ".join(f"bit {b}: {name}" for b, name in sorted(field["bits"].items()))
        say(f"  {index:2d}. {field['address']:#014x} {field['type']}  score {c.score:.2f}  {bits}")


def _signature(args: argparse.Namespace) -> int:
    from core.finder import profile_writer
    from core.finder.backends import resolve
    from core.finder.build import BuildOptions, SignatureBuilder
    from core.finder.position import FinderOptions

    backend = resolve(args.backend, args.start)
    flags = None
    if args.flag_offset is not None:
        names = tuple(n.strip() for n in (args.flag_names or "").split(",") if n.strip())
        flags = profile_writer.FlagField(args.flag_offset, args.flag_type, names)
    options = BuildOptions(name=args.name or args.out.stem, game=backend.game,
                           game_version=args.game_version or backend.game_version, processes=args.processes,
                           verify=args.verify, scale=args.scale, units=args.units, flags=flags, plan=backend.plan,
                           finder=FinderOptions(plan=backend.plan, region_filter=_filter(args)))
    with backend:
        result = SignatureBuilder(backend.launch, options, _progress(args)).build()
    if result.ok and result.profile_data is not None and result.draft is not None:
        profile_writer.write(args.out, result.profile_data, result.draft)
    out = str(args.out) if result.ok else None
    if args.json:  # "next" last: what to try next ends the output, whatever the outcome
        print(json.dumps({"out": out, **result.to_json(args.backend, out)}))
    else:
        print(("wrote " + str(args.out) + ": " if result.ok else "FAILED: ") + result.message)
        if result.pick is not None:
            print(f"  pattern {result.pick.pattern.text}")
        for step in result.next_steps(args.backend, out):
            print(f"next: {step}")
    return 0 if result.ok else 1


def _verify(args: argparse.Namespace) -> int:
    from core.evaluation.profile import ProfileError, load_profile
    from core.finder.backends import resolve
    from core.finder.verify import VerifyResult, verify_profile

    try:
        profile = load_profile(args.profile)
        profile.check_usable()
    except ProfileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    results: list[tuple[VerifyResult, float]] = []
    with resolve(args.backend, args.start) as backend:
        for index in range(args.restarts):
            _progress(args)(f"starting fresh process {index + 1} of {args.restarts}", index / args.restarts, 0)
            started = time.perf_counter()
            game = backend.launch()
            try:
                results.append((verify_profile(game, profile, backend.plan), time.perf_counter() - started))
            finally:
                game.close()
    ok = all(r.ok for r, _ in results)
    if args.json:
        print(json.dumps({"ok": ok, "profile": str(args.profile),
                          "processes": [r.to_json() | {"seconds": round(s, 2)} for r, s in results]}))
    else:
        for result, seconds in results:
            print(f"{'ok    ' if result.ok else 'FAILED'} process {result.pid}: {result.message} ({seconds:.1f} s)")
    return 0 if ok else 1


def _pointers(args: argparse.Namespace) -> int:
    from core.finder import profile_writer
    from core.finder.backends import resolve
    from core.finder.pointer_search import search
    from core.finder.position import FinderOptions

    with resolve(args.backend, args.start) as backend:
        report = search(backend.launch, FinderOptions(plan=backend.plan, region_filter=_filter(args)),
                        fresh=args.fresh, depth=args.depth, max_offset=args.max_offset, progress=_progress(args))
    wrote = None
    if args.out is not None and report.surviving:
        draft = profile_writer.ProfileDraft(args.name or args.out.stem, backend.game, backend.game_version, None,
                                            report.vertical, report.values,
                                            pointer=report.surviving[0].to_profile(), scan_perms=args.perms,
                                            provenance=[report.provenance()], right_turn=report.right_turn)
        profile_writer.write(args.out, profile_writer.build(draft), draft)
        wrote = str(args.out)
    if args.json:  # "next" last: what to try next ends the output, whatever the outcome
        print(json.dumps({"out": wrote, **report.to_json(args.backend, wrote)}))
    else:
        print(f"{len(report.found)} chain(s) in process {report.pids[0]} ({report.static_roots} static, with no "
              f"pointer); {len(report.surviving)} resolved in {args.fresh} fresh process(es)")
        for chain in report.surviving[:20]:
            print(f"  {chain.describe()}")
        if wrote:
            print(f"wrote {wrote}")
        for step in report.next_steps(args.backend, wrote):
            print(f"next: {step}")
    return 0 if report.surviving else 1


HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "find-position": _find_position, "find-flag": _find_flag, "signature": _signature, "verify": _verify,
    "pointers": _pointers,
}
