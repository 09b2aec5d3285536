"""`python main.py backend record-start BACKEND STATE`: record where a start state puts the player.

It starts the game in the state (its macro included), waits for the picture to come to rest, and prints the
state's `check:` block: the evaluator's position where a memory profile reads the game, and a reference
frame saved as PNG beside the backend file, with an image tolerance measured from how much the picture
changes at rest. Paste the block under the state in the backend file (docs/backend-format.md).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import cv2
import yaml

from core.backends.profile import BackendProfile

REST_S = 1.0
NOISE_MARGIN = 3.0       # the image tolerance: this many times the picture's own change at rest ...
MIN_IMAGE_TOLERANCE = 0.02  # ... and never below this (compression, a blinking cursor)


def add_arguments(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:  # pyright: ignore[reportPrivateUsage]  # argparse's subparsers type has no public name
    record = sub.add_parser("record-start", help="record where a start state puts the player (its check:)")
    record.add_argument("backend", help="a backend name or a backend file")
    record.add_argument("state", help="the start state to record")
    record.add_argument("--image", help="where to save the reference frame (default: NAME/start_STATE.png beside "
                                        "the backend file)")
    record.add_argument("--tolerance", type=float, default=1.0,
                        help="how far from the recorded position a start may be, in the profile's units (default 1)")
    record.add_argument("--rest", type=float, default=REST_S, help=f"seconds to wait at rest (default {REST_S:g})")


def run(backend: BackendProfile, args: argparse.Namespace) -> int:
    from core.backends.session import BackendSession
    from core.backends.start_check import difference_of
    from core.game.errors import GameError

    states = backend.start_states or []
    if args.state not in states:
        print(f"error: {backend.name} has no start state {args.state!r}; it has {', '.join(states) or 'none'}",
              file=sys.stderr)
        return 2
    if args.tolerance <= 0 or args.rest < 0:
        print("error: --tolerance must be above 0 and --rest at least 0", file=sys.stderr)
        return 2
    image = Path(args.image) if args.image else Path(backend.name) / f"start_{args.state}.png"
    target = image if image.is_absolute() else backend.directory / image
    try:
        with BackendSession.open(backend, start_state=args.state) as session:
            session.prepare(args.state, check=False)
            time.sleep(args.rest)
            first = session.game.latest_frame().pixels.copy()
            time.sleep(args.rest)
            frame = session.game.latest_frame().pixels.copy()
            sample = session.evaluator.sample_after(time.time()) if session.evaluator is not None else None
    except GameError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    target.parent.mkdir(parents=True, exist_ok=True)
    if not cv2.imwrite(str(target), cv2.cvtColor(frame, cv2.COLOR_RGB2BGR)):
        print(f"error: could not write {target}", file=sys.stderr)
        return 1
    noise = difference_of(frame, first)
    check: dict[str, object] = {}
    if sample is not None:
        check["position"] = [round(sample.x, 3), round(sample.y, 3), round(sample.z, 3)]
        check["tolerance"] = args.tolerance
    check["image"] = str(image)
    check["image_tolerance"] = round(max(MIN_IMAGE_TOLERANCE, NOISE_MARGIN * noise), 3)
    print(f"saved the frame at rest to {target} (it changed by {noise:.4f} in {args.rest:g} s at rest)")
    if sample is None:
        print("no memory profile: the start is checked by its picture only")
    print(f"# under external.start_states.{args.state} in {backend.path}:")
    print(yaml.safe_dump({"check": check}, default_flow_style=None, sort_keys=False, width=120), end="")
    return 0
