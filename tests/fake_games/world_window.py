"""The built-in world in an X window of its own, as a foreign game would be: for `backend new`'s tests.

    python tests/fake_games/world_window.py [--title "PokeGym Town"] [--width 640] [--height 360]

It starts the real world process (software renderer, lockstep) and advances it one tick per frame, 30 times a
second, drawing each frame into its window. Input is a desktop game's: W S A D walk, and the mouse turns the
camera (0.25 degrees per pixel). While it has input focus it puts the pointer back in its centre every frame and
turns by how far it was from there, as first-person games do (the first frame after focus only centres it). It
knows nothing of PokeGym's backends: the scaffold sees only its window, its frames and its pid.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from Xlib import XK, X, display

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from core.game.builtin import BuiltinWorld  # after the project's root is on the path
from core.game.pad import PadState

DEGREES_PER_PX = 0.25
PITCH_PER_TICK = 2.0   # the world's camera pitches 60 deg/s at full stick: 2 deg a tick at 30 ticks/s
STRIP_ROWS = 32        # put_image in strips: one request must stay under the X server's request size


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--title", default="PokeGym Town")
    parser.add_argument("--width", type=int, default=640)
    parser.add_argument("--height", type=int, default=360)
    args = parser.parse_args()
    world = BuiltinWorld.launch(width=args.width, height=args.height, mode="lockstep", renderer="software",
                                audio="off")
    d = display.Display()
    screen = d.screen()
    window = screen.root.create_window(0, 0, args.width, args.height, 0, screen.root_depth,
                                       event_mask=X.KeyPressMask | X.KeyReleaseMask | X.FocusChangeMask)
    window.set_wm_name(args.title)
    window.change_property(d.intern_atom("_NET_WM_PID"), d.intern_atom("CARDINAL"), 32, [os.getpid()])
    window.map()
    gc = window.create_gc()
    keys = {name: d.keysym_to_keycode(XK.string_to_keysym(name)) for name in ("w", "a", "s", "d")}
    held: set[int] = set()
    centre = (args.width // 2, args.height // 2)
    pitch = 0.0
    focused = centred = False
    try:
        while True:
            began = time.monotonic()
            while d.pending_events():
                event = d.next_event()
                if event.type in (X.KeyPress, X.KeyRelease):
                    (held.add if event.type == X.KeyPress else held.discard)(event.detail)
                elif event.type in (X.FocusIn, X.FocusOut):
                    focused, centred = event.type == X.FocusIn, False
            pointer = window.query_pointer()
            dx, dy = pointer.win_x - centre[0], pointer.win_y - centre[1]
            if focused and (dx or dy):
                window.warp_pointer(*centre)
                if centred and dx:
                    world.turn_camera(dx * DEGREES_PER_PX)
                if centred:
                    pitch -= dy * DEGREES_PER_PX  # the mouse down looks down
            centred = focused
            look = 0.0
            if abs(pitch) >= PITCH_PER_TICK:
                look = 1.0 if pitch > 0 else -1.0
                pitch -= look * PITCH_PER_TICK
            walk_y = (keys["w"] in held) - (keys["s"] in held)
            walk_x = (keys["d"] in held) - (keys["a"] in held)
            world.hold_ticks(PadState(left_x=float(walk_x), left_y=float(walk_y), right_y=look), 1)
            _draw(window, gc, world.latest_frame().pixels)
            d.flush()
            time.sleep(max(0.0, 1 / 30 - (time.monotonic() - began)))
    finally:
        world.close()


def _draw(window: Any, gc: Any, pixels: np.ndarray) -> None:
    height, width = pixels.shape[:2]
    bgrx = np.zeros((height, width, 4), np.uint8)
    bgrx[..., :3] = pixels[..., ::-1]
    for top in range(0, height, STRIP_ROWS):
        strip = bgrx[top:top + STRIP_ROWS]
        window.put_image(gc, 0, top, width, strip.shape[0], X.ZPixmap, 24, 0, strip.tobytes())


if __name__ == "__main__":
    sys.exit(main())
