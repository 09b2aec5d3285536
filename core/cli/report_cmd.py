"""`python main.py report DIR`: success rates, movement metrics, failure taxonomy and the IM/SR
correlation for a run folder; writes report.md, CSV tables and im_vs_sr.png into DIR."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.session.report import build_report, write_report


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("folder", type=Path, help="a folder written by `python main.py run --out`")


def run(args: argparse.Namespace) -> int:
    try:
        report = build_report(args.folder)
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(write_report(args.folder, report))
    print(f"wrote {args.folder / 'report.md'}, CSV tables and {args.folder / 'im_vs_sr.png'}")
    return 0
