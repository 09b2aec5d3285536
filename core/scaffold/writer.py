"""The backend file the scaffold writes: every measured value with a comment saying how it was measured, and
validated with the project's own loader before it is written."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from core.backends.profile import BackendFileError, parse_backend
from core.scaffold.errors import ScaffoldError
from core.scaffold.measure import Measurements
from core.scaffold.windows import title_regex

TURN_DEGREES_PER_S = 120.0   # full right stick turns the camera this fast (as minetest.yaml and the built-in world)
ASSUMED_FOV = 90.0           # without --fov: an assumed horizontal field of view, said so in the file
MAX_SIZE = (1920, 1080)      # the largest benchmark resolution the format takes


@dataclass(frozen=True)
class GameFacts:
    """What the scaffold knows of the game besides its frames."""

    name: str
    command: list[str]
    env: dict[str, str]
    window_title: str
    own_display: bool
    screen: str
    process_name: str | None     # for `attach:` (attached games)
    fov: float | None
    fov_vertical: bool


def q(text: str) -> str:
    """A YAML double-quoted scalar (JSON's string syntax is YAML's)."""
    return json.dumps(text, ensure_ascii=False)


def frame_size(width: int, height: int) -> tuple[int, int]:
    scale = min(1.0, MAX_SIZE[0] / width, MAX_SIZE[1] / height)
    return max(16, round(width * scale)), max(16, round(height * scale))


def mouse_degrees(facts: GameFacts, found: Measurements) -> tuple[float | None, str]:
    """(degrees per mouse pixel, how it was obtained)."""
    look = found.mouse
    if look.degrees_per_px is None:
        return None, ""
    how = (f"the angle most upper (far) corners agreed the view turned (median of the rounds above; "
           f"{look.x_ratio or 0:.2f} px of picture per px of mouse at the centre)")
    if facts.fov is not None:
        which = "vertical" if facts.fov_vertical else "horizontal"
        return look.degrees_per_px, f"{how}, for the {which} field of view of {facts.fov:g} deg (--fov)"
    return look.degrees_per_px, (f"{how}; NOT yet the game's degrees: this assumes a {ASSUMED_FOV:g} deg "
                                 "horizontal field of view. Rerun with --fov DEG, or check that a turn of 90 deg "
                                 "turns 90 deg")


def backend_yaml(facts: GameFacts, found: Measurements) -> str:
    today = date.today().isoformat()
    how = f"measured {today} by `python main.py backend new`"
    lines = [
        f"# {facts.name}: a first backend file, {how} from the game's frames alone",
        "# (keys pressed and mouse moved through XTEST, the picture compared before and after with OpenCV).",
        "# Format: docs/backend-format.md. What to check by eye is listed where it was printed, and below as CHECK.",
        "format_version: 1",
        f"name: {facts.name}",
        f"title: {q(facts.window_title)}",
        "kind: external",
        "memory_profile: none          # no profile yet: find one with `python main.py memory find-position`",
    ]
    settle = found.settle_s
    if settle is not None:
        step = max(0.05, math.ceil(settle * 20) / 20)
        lines.append(f"step_settle_s: {step:g}            # the picture rested {settle:.2f} s after the slowest "
                     "input that moved it")
    else:
        lines.append("step_settle_s: 0.2             # CHECK: not measured (no input moved the picture)")
    lines += _external(facts, found)
    return "\n".join(lines) + "\n"


def _external(facts: GameFacts, found: Measurements) -> list[str]:
    width, height = frame_size(found.width, found.height)
    timeout = max(30, math.ceil(found.ready_s * 3 / 10) * 10)
    stable = 1.0 if found.still_at_rest else 0.0
    lines = ["external:", "  launch:", f"    executable: {q(facts.command[0])}",
             f"    args: [{', '.join(q(a) for a in facts.command[1:])}]"]
    if facts.env:
        lines.append("    env: {" + ", ".join(f"{k}: {q(v)}" for k, v in facts.env.items()) + "}")
    rest = (f"the picture changed at most {found.rest_change:.2%} of its pixels between two frames at rest"
            if found.still_at_rest else
            f"CHECK: the picture never rests (up to {found.rest_change:.2%} of its pixels change between frames with "
            "no input: animation, a clock?), so no stable_s")
    lines += [f"    # ready: the window showed, and the picture was still {found.ready_s:.1f} s after the start; "
              f"{rest}",
              f"    ready: {{window: true, timeout_s: {timeout}, settle_s: 0.5, stable_s: {stable:g}}}",
              "    stop_grace_s: 5"]
    if facts.process_name:
        lines.append(f"  attach: {{process_name: {q(facts.process_name)}}}")
    if facts.own_display:
        lines.append(f"  display: {{xvfb: always, screen: {facts.screen}}}   # our own X server, as measured")
    else:
        lines.append("  display: {xvfb: never}        # the user's display, as measured")
    lines += ["  frames:",
              f"    window_title: {q(title_regex(facts.window_title))}   # the window's title when it was measured",
              f"    width: {width}                  # the window was {found.width}x{found.height}",
              f"    height: {height}",
              "    fps: 30",
              "    stall_timeout_s: 15",
              "  input:",
              "    device: xtest",
              "    focus_settle_s: 0.6          # games swallow input just after they get focus"]
    lines += _keyboard(found)
    lines += _mouse(facts, found)
    lines += ["  start_states:",
              "    start: {}                    # CHECK: each episode relaunches the game; add `restore:` to copy a",
              "                                 # clean save first, and a `macro:` to reach the same place every time",
              "  default_start: start"]
    return lines


def _keyboard(found: Measurements) -> list[str]:
    lines = ["    keyboard:"]
    roles = ["forward", "back", "strafe_left", "strafe_right"]
    keys = [found.key_for(role) for role in roles]
    for index, key in enumerate(keys):
        if key is not None and key in keys[:index]:
            keys[index] = None  # one key cannot be two directions: the later one is not found
    if any(keys):
        guesses = dict(zip(roles, ("w", "s", "a", "d")))
        filled = [key or guesses[role] for key, role in zip(keys, roles)]
        missing = [role.replace("_", " ") for key, role in zip(keys, roles) if key is None]
        note = (f"   # CHECK: {', '.join(missing)} not found; guessed" if missing
                else "   # each key held 0.4 s: see the evidence below")
        lines.append(f"      left_stick: {{up: {filled[0]}, down: {filled[1]}, left: {filled[2]}, right: "
                     f"{filled[3]}}}{note}")
    turn = (found.key_for("turn_left"), found.key_for("turn_right"))
    if found.mouse.degrees_per_px is None and all(turn):
        up, down = found.key_for("look_up") or "Up", found.key_for("look_down") or "Down"
        lines.append(f"      right_stick: {{up: {up}, down: {down}, left: {turn[0]}, right: {turn[1]}}}   # no mouse "
                     "look: the camera turns with keys")
    jump = found.key_for("jump")
    lines.append(f"      buttons: {{A: {jump}}}" if jump else "      buttons: {}           # CHECK: no jump key found")
    for effect in found.keys:
        lines.append(f"      # {effect.key}: {effect.role or 'no use found'}: {effect.evidence}")
    return lines


def _mouse(facts: GameFacts, found: Measurements) -> list[str]:
    look = found.mouse
    degrees, how = mouse_degrees(facts, found)
    if degrees is None:
        return [f"    # no mouse look: {look.evidence}"]
    speed = min(20000.0, TURN_DEGREES_PER_S / degrees)
    invert = "true" if look.invert_y else "false"
    y_note = ("Y not measured (the view did not tilt)" if look.invert_y is None else
              f"moving the mouse down tilted the view {'up: inverted' if look.invert_y else 'down'}")
    return [f"    # mouse: {look.evidence}",
            f"    # degrees_per_px: {how}; {y_note}",
            f"    mouse: {{right_stick_px_per_s: {speed:.0f}, degrees_per_px: {degrees:.4f}, invert_y: {invert}}}"]


def write_backend(text: str, path: Path) -> None:
    """Validate `text` with the project's backend loader, then write it to `path`."""
    try:
        parse_backend(text, path)
    except BackendFileError as exc:
        raise ScaffoldError(f"the backend file came out invalid, which is a bug in `backend new`: {exc}") from None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ScaffoldError(f"could not write {path}: {exc}") from None
