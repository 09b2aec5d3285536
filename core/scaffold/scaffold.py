"""One scaffold run: start or attach to the game, find its window, measure, write the backend file."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core.game.errors import GameError
from core.game.external.x11 import WindowInfo, describe_windows
from core.scaffold.errors import ScaffoldError
from core.scaffold.measure import KEY_CANDIDATES, Measurements, focal_px, measure_keys
from core.scaffold.mouse import measure_mouse
from core.scaffold.probes import STILL_LEVEL, Prober
from core.scaffold.target import Target
from core.scaffold.windows import pick_window
from core.scaffold.writer import ASSUMED_FOV, GameFacts, backend_yaml, write_backend

REST_S = 1.0            # the picture is watched this long with no input
READY_STILL_S = 1.5     # the game is drawn when its picture has been still this long
READY_STRICT_S = 15.0   # ... at the prober's still level; past this, within the picture's rest noise (allow_rest_noise)


@dataclass(frozen=True)
class Options:
    name: str
    out: Path
    command: str | None = None
    attach: int | None = None
    display: str | None = None
    window: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    fov: float | None = None
    fov_vertical: bool = False
    screen: str = "1280x800x24"
    timeout_s: float = 90.0
    keys: tuple[str, ...] = KEY_CANDIDATES


@dataclass(frozen=True)
class Outcome:
    path: Path
    found: Measurements
    checks: list[str]


def scaffold(options: Options, say: Callable[[str], None]) -> Outcome:
    if (options.command is None) == (options.attach is None):
        raise ScaffoldError("give either --command \"...\" (start the game) or --attach PID (a running game)")
    began = time.monotonic()
    if options.command is not None:
        target = Target.start(options.command, dict(options.env), options.display, options.screen)
        say(f"started {target.name} (pid {target.pid}) on {target.display}"
            + (" (our own Xvfb)" if target.own_display else ""))
    else:
        assert options.attach is not None
        target = Target.attach(options.attach, options.display)
        say(f"attached to {target.name} (pid {target.pid}) on {target.display}")
    try:
        return _measure(options, target, began, say)
    except ValueError as exc:  # a --keys name the X server has no key for
        raise ScaffoldError(f"{exc} (--keys)") from None
    except (GameError, OSError) as exc:  # the window or the X server went away: usually the game exited
        gone = target.exited()
        raise ScaffoldError(f"{gone or exc}. Run it again; if the game keeps exiting, try its command in a terminal"
                            ) from None
    finally:
        target.close()


def _measure(options: Options, target: Target, began: float, say: Callable[[str], None]) -> Outcome:
    window = target.wait_for_window(options.window, options.timeout_s, say)
    prober = Prober(target.display, window)
    try:
        still = wait_drawn(prober, began + options.timeout_s, say)
        if still is None:
            say(f"the picture never stood still for {READY_STILL_S} s; measuring anyway")
        ready_s = time.monotonic() - began - READY_STILL_S
        window = _final_window(target, window, options.window)
        prober.window = window
        shown, _ = target.windows()
        say(f"windows: {describe_windows(shown)}")
        how = "the largest of the game's own" if options.window is None else f"matching {options.window!r}"
        say(f"the game's window: {window.title!r} ({window.width}x{window.height}, {how})")
        rest = prober.allow_rest_noise(REST_S)
        still_at_rest = rest <= STILL_LEVEL  # the prober's level may be raised already (wait_drawn)
        say(f"at rest: {'still' if still_at_rest else f'changing ({rest:.2%} of pixels between frames)'}")
        width, height = prober.frame_size()
        focal = (focal_px(options.fov, height if options.fov_vertical else width) if options.fov is not None
                 else focal_px(ASSUMED_FOV, width))
        prober.focus()
        say("mouse look:")
        mouse = measure_mouse(prober, focal, say)
        say("keys (each held 0.4 s):")
        keys = measure_keys(prober, options.keys, focal, mouse, say)
    finally:
        prober.close()
    found = Measurements(width, height, ready_s, rest, still_at_rest, keys, mouse)
    gone = target.exited()
    if gone is not None:
        raise ScaffoldError(f"{gone} while it was being measured; run this again")
    if not any(effect.role for effect in keys) and mouse.degrees_per_px is None:
        raise ScaffoldError("nothing moved the view: no key and no mouse motion changed the picture. Is the game "
                            "past its menus (start it straight into play, e.g. a --go or +map option), and does it "
                            "take XTEST input (try xdotool key w on its display)?")
    facts = GameFacts(options.name, target.command, dict(options.env), window.title, target.own_display,
                      options.screen, target.name if options.attach is not None else None, options.fov,
                      options.fov_vertical)
    write_backend(backend_yaml(facts, found), options.out)
    return Outcome(options.out, found, _checks(facts, found))


def wait_drawn(prober: Prober, deadline: float, say: Callable[[str], None]) -> float | None:
    """Wait until the picture has been still for READY_STILL_S (the world drawn); None if it never was by the
    deadline. A picture that moves at rest (OpenArena: 0.3-0.5% of pixels between frames, an idle weapon and
    flickering lights) is never still at the prober's level, and waited out the whole timeout (90 of a 156 s run):
    after READY_STRICT_S, still is judged against the picture's own rest noise, as the probes after it are."""
    strict_s = min(READY_STRICT_S, deadline - time.monotonic())
    _, still = prober.wait_still(max(1.0, strict_s), READY_STILL_S)
    if still is not None or time.monotonic() >= deadline:
        return still
    noise = prober.allow_rest_noise(REST_S)
    say(f"the picture moves at rest ({noise:.2%} of pixels between frames); waiting for it to change no more "
        "than that")
    _, still = prober.wait_still(max(1.0, deadline - time.monotonic()), READY_STILL_S)
    return still


def _final_window(target: Target, first: WindowInfo, title_regex: str | None) -> WindowInfo:
    """The game's window once drawn (games retitle theirs once loaded: Minetest's main menu became the game)."""
    shown, own = target.windows()
    same = [w for w in shown if w.window_id == first.window_id]
    if same:
        return same[0]
    return pick_window(shown, own, title_regex)


def _checks(facts: GameFacts, found: Measurements) -> list[str]:
    checks = [f"the window title {facts.window_title!r} is the same on every start (frames.window_title matches "
              "it exactly; loosen the regex if part of it changes)"]
    for role in ("forward", "back", "strafe_left", "strafe_right", "jump"):
        turn = role.replace("strafe", "turn")
        if found.key_for(role) is None and found.key_for(turn) is None:
            checks.append(f"no key was found to {role.replace('_', ' ')}: set it in external.input.keyboard")
        elif found.key_for(role) is None:
            checks.append(f"{found.key_for(turn)} turns the view rather than strafing: if the game can strafe, set "
                          "the key in external.input.keyboard.left_stick")
    if found.mouse.degrees_per_px is None:
        checks.append("the mouse did not turn the view: if the game has mouse look, check it has the pointer "
                      "(click into it) and run again")
    elif facts.fov is None:
        checks.append("degrees_per_px assumes a 90 deg field of view: run again with --fov DEG (the game's "
                      "setting), or turn 90 deg (python main.py world --backend FILE, then the RotateRight action "
                      "three times) and correct it")
    if not found.still_at_rest:
        checks.append("the picture moves at rest (animation, a clock): ready.stable_s is 0, so check that frames "
                      "are drawn when the game says it is ready")
    checks.append("start_states: each episode relaunches the game as it is; copy a clean save with `restore:` "
                  "and reach the same place every time (docs/backend-format.md)")
    checks.append("the frames hold nothing an agent must not see (coordinates, debug text, console notices)")
    return checks
