"""PokeGym Studio: the one entry point.

    python main.py               the studio window, live on the built-in world (--backend minetest: on Minetest)
    python main.py replay PATH   the studio's Replay view on an episode file or a folder of them
    python main.py demo          walk the built-in world through the gamepad and save what it saw
    python main.py world         run the built-in 3D world as its own process
    python main.py scan          find an AOB pattern in a live process's memory
    python main.py memory        value scans; find a game's position and flags; build and verify a profile
    python main.py tasks list    the 30-task suite; `tasks validate --all` drives every task
    python main.py backend       `backend new NAME --command ...`: a first backend file, measured; `calibrate`: motion
    python main.py run           run and record episodes; `report DIR` makes the paper's tables
    python main.py labels        export the studio's labels (`labels export DIR`), kappa (`labels agreement`)
    python main.py export        a clip of a step range (`export clip EP.h5 --steps 40-75 --out c.mp4`), a dataset
    python main.py bench world   measure rendering and stepping (JSON lines with --json); `bench external`: capture
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import TextIO

# (command, module in core.cli, one-line help). Each module has add_arguments(parser) and run(args).
_COMMANDS: list[tuple[str, str, str]] = [
    ("demo", "demo_cmd", "drive the built-in world through a short tour and save frames"),
    ("world", "world_cmd", "run a game as its own process (the built-in world, or --backend NAME|PATH)"),
    ("scan", "scan_cmd", "find an AOB pattern in a live process's memory (read-only)"),
    ("memory", "memory_cmd", "value scans, and find a game's position, flags and signature (read-only)"),
    ("tasks", "tasks_cmd", "list and validate the task suite"),
    ("backend", "backend_cmd", "work on a backend file: `new` measures a running game; `calibrate` its motion table"),
    ("run", "run_cmd", "run episodes (task x granularity x agent x trial) and record them"),
    ("report", "report_cmd", "tables and the IM/SR correlation for a run folder"),
    ("labels", "labels_cmd", "export deadlock/failure labels and measure annotator agreement"),
    ("export", "export_cmd", "share results: video clips with overlays (.mp4, .gif) and training datasets"),
    ("bench", "bench_cmd", "measure performance (ratios against same-run baselines)"),
]


def _add(subparsers: argparse._SubParsersAction, name: str, module_name: str, help_text: str) -> None:
    module = importlib.import_module(f"core.cli.{module_name}")
    parser = subparsers.add_parser(name, help=help_text, description=module.__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    module.add_arguments(parser)
    parser.set_defaults(handler=_bench_handler(module) if name == "bench" else module.run)


def _bench_handler(module: ModuleType) -> Callable[[argparse.Namespace], int]:
    """`bench live` measures the studio, which core must not import; everything else is core's."""

    def run(args: argparse.Namespace) -> int:
        if args.suite == "live":
            from studio.bench_live import bench_live

            bench_live(args, module.emit)
            return 0
        if args.suite == "replay":
            from studio.bench_replay import bench_replay

            bench_replay(args, module.emit)
            return 0
        return int(module.run(args))

    return run


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The command line's parser. Given `argv`, only the command it names is imported and given its arguments:
    importing every command's module was most of a command's start-up (0.6 s of CPU, paid by every `run`,
    `report` and `memory` call, and by each of the test suite's ~200 command runs). None: every command."""
    names = {name for name, _, _ in _COMMANDS}
    chosen = None if argv is None else next((word for word in argv if word in names), "")
    parser = argparse.ArgumentParser(
        prog="python main.py",
        description="PokeGym Studio: benchmark VLM agents acting from pixels in a 3D open world.",
    )
    parser.add_argument("--backend", default="builtin", metavar="NAME|PATH",
                        help="the game the studio opens on: builtin (default), minetest, ryujinx, or a backend file")
    parser.add_argument("--attach", nargs="?", const="auto", metavar="PID|FILE",
                        help="the studio drives a game already running (an external game's pid, or nothing to find "
                             "it by the backend's attach section; the built-in world's connection file) and leaves "
                             "it running")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    for name, module_name, help_text in _COMMANDS:
        if chosen is None or name == chosen:
            _add(subparsers, name, module_name, help_text)
        else:
            subparsers.add_parser(name, help=help_text)  # listed in --help; its arguments are not needed now
    replay = subparsers.add_parser("replay", help="open the studio's Replay view on an episode or a folder",
                                   description="Open the studio on the Replay view: an .h5 episode file, or a "
                                               "folder (a run folder, or recordings/) listed as episodes.")
    replay.add_argument("path", help="an episode file (.h5) or a folder of them")
    replay.set_defaults(handler=_replay)
    return parser


def _replay(args: argparse.Namespace) -> int:
    from studio.replay.open_check import not_a_recording

    problem = not_a_recording(args.path)
    if problem is not None:
        print(f"replay: {problem}", file=sys.stderr)
        return 2
    from studio.app import run_studio

    return run_studio(open_path=args.path)


def _progress_to_stderr() -> None:
    """A command prints what core's loggers say at INFO and above (a game still starting, and what it waits for)
    on stderr as plain lines; the studio has its own log (studio/logging_setup.py)."""
    import logging

    core = logging.getLogger("core")
    if any(h.get_name() == "pokegym-cli" for h in core.handlers):
        return  # main() called again in the same process (tests)

    class CurrentStderr(logging.StreamHandler):
        """Writes to whatever sys.stderr is when a line is logged: main() called in-process (tests) must not keep
        a stream that is closed later."""

        @property
        def stream(self) -> TextIO:
            return sys.stderr

        @stream.setter
        def stream(self, _value: TextIO) -> None:
            pass

    handler = CurrentStderr()
    handler.set_name("pokegym-cli")
    handler.setFormatter(logging.Formatter("%(message)s"))
    core.addHandler(handler)
    core.setLevel(logging.INFO)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        if not hasattr(args, "passed_through"):  # only `world` hands options on (to the world process)
            parser.error(f"unrecognized arguments: {' '.join(unknown)}")
        args.passed_through = unknown
    handler = getattr(args, "handler", None)
    if handler is None:
        from studio.app import run_studio

        return run_studio(backend=args.backend, attach=args.attach)
    _progress_to_stderr()
    try:
        return int(handler(args) or 0)
    except BrokenPipeError:
        # The reader of our output went away (`... | head`): stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        from core.cli.user_errors import explain

        status = explain(exc)
        if status is None:
            raise
        return status


if __name__ == "__main__":
    sys.exit(main())
