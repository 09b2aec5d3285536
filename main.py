"""PokeGym Studio: the one entry point.

    python main.py demo          walk the built-in world through the gamepad and save what it saw
    python main.py world         run the built-in 3D world as its own process
    python main.py scan          find an AOB pattern in a live process's memory
    python main.py tasks list    the 30-task suite; `tasks validate --all` drives every task
    python main.py run           run and record episodes; `report DIR` makes the paper's tables
    python main.py bench world   measure rendering and stepping (JSON lines with --json)
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable


def _world(subparsers: argparse._SubParsersAction) -> None:
    from core.cli import world_cmd

    parser = subparsers.add_parser("world", help="run the built-in 3D world (a separate game process)",
                                   description=world_cmd.__doc__)
    world_cmd.add_arguments(parser)
    parser.set_defaults(handler=world_cmd.run)


def _bench(subparsers: argparse._SubParsersAction) -> None:
    from core.cli import bench_cmd

    parser = subparsers.add_parser("bench", help="measure performance (ratios against same-run baselines)",
                                   description=bench_cmd.__doc__)
    bench_cmd.add_arguments(parser)
    parser.set_defaults(handler=bench_cmd.run)


def _demo(subparsers: argparse._SubParsersAction) -> None:
    from core.cli import demo_cmd

    parser = subparsers.add_parser("demo", help="drive the built-in world through a short tour and save frames",
                                   description=demo_cmd.__doc__)
    demo_cmd.add_arguments(parser)
    parser.set_defaults(handler=demo_cmd.run)


def _scan(subparsers: argparse._SubParsersAction) -> None:
    from core.cli import scan_cmd

    parser = subparsers.add_parser("scan", help="find an AOB pattern in a live process's memory (read-only)",
                                   description=scan_cmd.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    scan_cmd.add_arguments(parser)
    parser.set_defaults(handler=scan_cmd.run)


def _tasks(subparsers: argparse._SubParsersAction) -> None:
    from core.cli import tasks_cmd

    parser = subparsers.add_parser("tasks", help="list and validate the task suite",
                                   description=tasks_cmd.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    tasks_cmd.add_arguments(parser)
    parser.set_defaults(handler=tasks_cmd.run)


def _run(subparsers: argparse._SubParsersAction) -> None:
    from core.cli import run_cmd

    parser = subparsers.add_parser("run", help="run episodes (task x granularity x agent x trial) and record them",
                                   description=run_cmd.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    run_cmd.add_arguments(parser)
    parser.set_defaults(handler=run_cmd.run)


def _report(subparsers: argparse._SubParsersAction) -> None:
    from core.cli import report_cmd

    parser = subparsers.add_parser("report", help="tables and the IM/SR correlation for a run folder",
                                   description=report_cmd.__doc__)
    report_cmd.add_arguments(parser)
    parser.set_defaults(handler=report_cmd.run)


_COMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [_demo, _world, _scan, _tasks, _run, _report, _bench]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python main.py",
        description="PokeGym Studio: benchmark VLM agents acting from pixels in a 3D open world.",
    )
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    for add in _COMMANDS:
        add(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 0
    return int(handler(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
