"""`python main.py demo`: start the built-in world, drive it through the virtual gamepad, save frames.

The tour looks around the fountain plaza, walks to an NPC, talks to them (A opens and
advances the dialogue), then turns and heads down Main Street. Everything goes through the
same GameConnection an agent uses: frames in, pad input out.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import cv2
import numpy as np

from core.game.builtin import BuiltinWorld
from core.game.errors import GameError
from core.game.pad import Button, PadState

_TOUR: list[tuple[str, PadState, float]] = [
    ("look around (right stick)", PadState(right_x=1.0), 1.0),
    ("look around (right stick)", PadState(right_x=1.0), 1.0),
    ("look around (right stick)", PadState(right_x=1.0), 1.0),
    ("walk to the man by the bench", PadState(left_x=0.93, left_y=0.36), 1.4),
    ("press A: talk", PadState(buttons=frozenset({Button.A})), 0.1),
    ("press A: next line", PadState(buttons=frozenset({Button.A})), 0.1),
    ("press A: close", PadState(buttons=frozenset({Button.A})), 0.1),
    ("turn the camera towards the south", PadState(right_x=1.0), 1.5),
    ("walk south", PadState(left_y=1.0), 1.5),
    ("walk south", PadState(left_y=1.0), 1.5),
    ("run south (B held)", PadState(left_y=1.0, buttons=frozenset({Button.B})), 1.5),
]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, default=Path("out/demo"), help="folder for frames (default %(default)s)")
    parser.add_argument("--width", type=int, default=640)
    parser.add_argument("--height", type=int, default=360)
    parser.add_argument("--renderer", choices=["auto", "software", "hardware"], default="auto")


def run(args: argparse.Namespace) -> int:
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    try:
        with BuiltinWorld.launch(width=args.width, height=args.height, renderer=args.renderer) as world:
            print(f"world '{world.info.name}' started (pid {world.pid}, {world.info.mode}, "
                  f"{world.info.width}x{world.info.height}) in {time.perf_counter() - started:.1f} s")
            world.reset("plaza_north")
            saved = [_save(world.latest_frame().pixels, args.out, 0, "start: plaza_north")]
            for index, (label, pad, seconds) in enumerate(_TOUR, start=1):
                result = world.hold(pad, seconds)
                if pad.buttons:
                    world.hold_ticks(PadState(), 1)  # release, so the next press counts
                saved.append(_save(world.latest_frame().pixels, args.out, index, label))
                print(f"  step {index:2d}  tick {result.tick:4d}  {label}")
            left, right = world.extra_views([-90.0, 90.0])
            sheet = _contact_sheet([*saved, (left.pixels, "left view (-90)"), (right.pixels, "right view (+90)")])
    except GameError as exc:
        print(f"error: {exc}")
        return 1
    sheet_path = args.out / "contact_sheet.png"
    cv2.imwrite(str(sheet_path), cv2.cvtColor(sheet, cv2.COLOR_RGB2BGR))
    print(f"saved {len(saved)} frames and {sheet_path} in {time.perf_counter() - started:.1f} s")
    return 0


def _save(pixels: np.ndarray, out: Path, index: int, label: str) -> tuple[np.ndarray, str]:
    cv2.imwrite(str(out / f"frame_{index:02d}.png"), cv2.cvtColor(pixels, cv2.COLOR_RGB2BGR))
    return pixels, label


def _contact_sheet(frames: list[tuple[np.ndarray, str]], columns: int = 4) -> np.ndarray:
    tiles: list[np.ndarray] = []
    for pixels, label in frames:
        tile = cv2.resize(pixels, (320, 180), interpolation=cv2.INTER_AREA)
        cv2.rectangle(tile, (0, 0), (320, 18), (0, 0, 0), -1)
        cv2.putText(tile, label, (4, 13), cv2.FONT_HERSHEY_SIMPLEX, 0.42, (255, 255, 255), 1, cv2.LINE_AA)
        tiles.append(tile)
    while len(tiles) % columns:
        tiles.append(np.zeros_like(tiles[0]))
    rows = [np.hstack(tiles[i:i + columns]) for i in range(0, len(tiles), columns)]
    return np.vstack(rows)
