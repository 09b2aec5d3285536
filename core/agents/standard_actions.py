"""The standard action set: what a backend file without `actions:` (or with `actions: {}`) gets.

These are the paper's discrete actions, as the built-in world plays them: moves relative to the camera held
0.5 s, camera turns of 30 degrees and tilts of 15, A to interact, B to cancel, and a wait. Continuous control
takes its defaults from `ContinuousSpec`. See docs/actions.md.
"""

from __future__ import annotations

from typing import Any


def _step(pad: dict[str, Any], seconds: float) -> dict[str, Any]:
    return {"pad": pad, "seconds": seconds}


def _press(button: str) -> list[dict[str, Any]]:
    return [_step({"buttons": [button]}, 0.1), _step({}, 0.0333)]


STANDARD_DISCRETE: dict[str, dict[str, Any]] = {
    "MoveForward": {"aliases": ["forward", "walk forward", "go forward", "move up", "up"],
                    "macro": [_step({"left_y": 1.0}, 0.5)]},
    "MoveBackward": {"aliases": ["backward", "backwards", "back up", "walk backward", "move back", "move down",
                                 "down"],
                     "macro": [_step({"left_y": -1.0}, 0.5)]},
    "MoveLeft": {"aliases": ["left", "strafe left", "walk left"], "macro": [_step({"left_x": -1.0}, 0.5)]},
    "MoveRight": {"aliases": ["right", "strafe right", "walk right"], "macro": [_step({"left_x": 1.0}, 0.5)]},
    "RotateLeft": {"aliases": ["turn left", "rotate camera left", "look left", "camera left"],
                   "macro": [_step({"right_x": -1.0}, 0.25)]},
    "RotateRight": {"aliases": ["turn right", "rotate camera right", "look right", "camera right"],
                    "macro": [_step({"right_x": 1.0}, 0.25)]},
    "LookUp": {"aliases": ["tilt up", "camera up"], "macro": [_step({"right_y": 1.0}, 0.25)]},
    "LookDown": {"aliases": ["tilt down", "camera down"], "macro": [_step({"right_y": -1.0}, 0.25)]},
    "Interact": {"aliases": ["a", "press a", "a button", "talk", "interact", "use", "confirm", "pick up", "open",
                             "read"],
                 "macro": _press("A")},
    "Cancel": {"aliases": ["press b", "b button", "b", "cancel", "close"], "macro": _press("B")},
    "Wait": {"aliases": ["wait", "stay", "idle", "noop", "no-op", "nothing", "do nothing"],
             "macro": [_step({}, 0.5)]},
}
STANDARD_MOVEMENT: list[str] = ["MoveForward", "MoveBackward", "MoveLeft", "MoveRight"]
