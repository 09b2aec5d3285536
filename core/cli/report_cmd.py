"""`python main.py report DIR`: success rates, movement metrics, failure taxonomy (human labels where
confirmed, automatic suggestions otherwise) and the IM/SR correlation for a run folder; writes report.md,
CSV tables and im_vs_sr.png into DIR. With --json, prints every number as JSON instead of markdown. With
--html FILE, also writes the report as one self-contained HTML file to send or attach (docs/export.md)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from core.analysis.report import CORRELATION_UNITS, ReportError, build_report, write_report


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("folder", type=Path, help="a folder written by `python main.py run --out`")
    parser.add_argument("--json", action="store_true", help="print the report's numbers as JSON (files still written)")
    parser.add_argument("--correlation-unit", choices=CORRELATION_UNITS, default="task",
                        help="what one point of the IM-rate/success-rate correlation is: an agent on one task at one "
                             "granularity with its trials pooled (task, the default), one episode, or agent x "
                             "granularity x task category (setting)")
    parser.add_argument("--rescore", action="store_true",
                        help="recompute every episode's metrics from its episode file with the current definitions "
                             "(results.jsonl is not changed)")
    parser.add_argument("--html", type=Path, metavar="FILE",
                        help="also write one self-contained HTML report (tables, scatter, taxonomy, per-task results, "
                             "a thumbnail strip of each failed episode's deadlock span)")


def run(args: argparse.Namespace) -> int:
    try:
        report = build_report(args.folder, args.correlation_unit, args.rescore)
    except ReportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for warning in report["warnings"]:
        print(f"warning: {warning}", file=sys.stderr)
    text = write_report(args.folder, report)
    if args.html is not None:
        from core.export.html_report import write_html

        try:
            write_html(args.html, args.folder, report)
        except OSError as exc:
            print(f"error: cannot write {args.html}: {exc}", file=sys.stderr)
            return 2
        print(f"wrote {args.html}", file=sys.stderr)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(text)
    if report["episodes"]:
        print(f"wrote {args.folder / 'report.md'}, CSV tables and {args.folder / 'im_vs_sr.png'}")
    else:  # nothing judged: no table, no scatter
        print(f"wrote {args.folder / 'report.md'}")
    return 0
