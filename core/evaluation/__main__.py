"""`python -m core.evaluation --pid PID --profile PATH --runtime-dir DIR`: the evaluator process."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.evaluation.evaluator import run
from core.evaluation.profile import ProfileError, load_profile


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.evaluation", description=__doc__)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--profile", type=Path, required=True)
    parser.add_argument("--runtime-dir", type=Path, required=True)
    parser.add_argument("--hz", type=float, default=60.0)
    parser.add_argument("--owner-pid", type=int)
    args = parser.parse_args(argv)
    try:
        profile = load_profile(args.profile)
        profile.check_usable()
    except (ProfileError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return run(args.pid, profile, args.runtime_dir, args.hz, args.owner_pid)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
