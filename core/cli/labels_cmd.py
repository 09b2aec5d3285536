"""`python main.py labels`: export the studio's deadlock and failure labels, and measure agreement.

    python main.py labels export RUN_FOLDER --format csv --out labels.csv
    python main.py labels export RUN_FOLDER --format jsonl                # to standard output
    python main.py labels agreement RUN_FOLDER --a alice --b bob
    python main.py labels agreement RUN_FOLDER --a alice --b auto         # against the automatic suggestions

Every *.h5 episode under the folder is read (recursively); files that cannot be read are skipped with a
warning on standard error. Formats and the kappa definitions: docs/labels-format.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.labels.agreement import category_agreement, step_agreement
from core.labels.episodes import load_folder
from core.labels.export import label_rows, write_rows
from core.labels.model import AUTO_ANNOTATOR


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    export = sub.add_parser("export", help="one row per span and per episode, as CSV or JSON Lines")
    export.add_argument("folder", type=Path)
    export.add_argument("--format", choices=("csv", "jsonl"), default="csv")
    export.add_argument("--out", type=Path, help="output file (default: standard output)")
    agreement = sub.add_parser("agreement", help="Cohen's kappa between two annotators")
    agreement.add_argument("folder", type=Path)
    agreement.add_argument("--a", required=True, help="first annotator")
    agreement.add_argument("--b", required=True, help=f"second annotator ({AUTO_ANNOTATOR!r}: the automatic "
                                                      "suggestions)")


def run(args: argparse.Namespace) -> int:
    if not args.folder.is_dir():
        print(f"error: {args.folder} is not a folder", file=sys.stderr)
        return 2
    return _export(args) if args.action == "export" else _agreement(args)


def _export(args: argparse.Namespace) -> int:
    rows, episodes, warnings = label_rows(args.folder)
    _warn(warnings)
    if args.out is None:
        written = write_rows(rows, sys.stdout, args.format)
    else:
        with args.out.open("w", encoding="utf-8", newline="") as stream:
            written = write_rows(rows, stream, args.format)
    where = args.out or "standard output"
    print(f"{written} rows from {episodes} episodes to {where}; {len(warnings)} files skipped", file=sys.stderr)
    return 0


def _agreement(args: argparse.Namespace) -> int:
    episodes, warnings = load_folder(args.folder)
    _warn(warnings)
    print(f"{args.a} vs {args.b} over {len(episodes)} episodes in {args.folder}")
    print(f"failure category         {category_agreement(episodes, args.a, args.b).describe()}")
    print(f"deadlock steps (kind)    {step_agreement(episodes, args.a, args.b, 'kind').describe()}")
    print(f"deadlock steps (yes/no)  {step_agreement(episodes, args.a, args.b, 'binary').describe()}")
    return 0


def _warn(warnings: list[str]) -> None:
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
