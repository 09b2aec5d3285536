"""Regenerate the README's world frames: `python docs/make_screenshots.py`.

Every frame is a real frame from the built-in world, driven through the gamepad like an agent.
"""

from __future__ import annotations

import sys
from pathlib import Path

import cv2

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.game.builtin import BuiltinWorld
from core.game.pad import Button, PadState

OUT = Path(__file__).resolve().parent / "images"


def save(world: BuiltinWorld, name: str) -> None:
    pixels = world.latest_frame().pixels
    cv2.imwrite(str(OUT / f"{name}.png"), cv2.cvtColor(pixels, cv2.COLOR_RGB2BGR))
    print(f"wrote {OUT / name}.png")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with BuiltinWorld.launch(renderer="software") as world:
        world.reset("harbor_road")                           # on Harbor Road, facing the shop fronts
        save(world, "world_street_signs")
        world.reset("plaza")
        world.hold(PadState(right_x=1.0), 1.25)              # turn to face north-west: fountain and clock tower
        world.hold(PadState(left_y=-1.0), 1.0)               # back off to fit the tower in
        world.hold(PadState(right_y=1.0), 0.3)
        save(world, "world_landmark_clock_tower")
        world.reset("west_bridge")
        world.hold(PadState(left_y=1.0), 1.0)
        save(world, "world_landmark_bridge")
        world.reset("plaza_north")
        world.hold(PadState(left_x=0.93, left_y=0.36), 1.4)
        world.press(Button.A)
        save(world, "world_dialogue")


if __name__ == "__main__":
    main()
