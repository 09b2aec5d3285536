"""Backend files for the fake window game (tests/fake_games/window_game.py), written into a test's folder."""

from __future__ import annotations

import sys
from pathlib import Path

from core.backends.profile import BackendProfile, parse_backend

GAME = Path(__file__).resolve().parent / "window_game.py"

FAKE_BACKEND = """
format_version: 1
name: {name}
title: A fake windowed game (tests)
kind: external
memory_profile: {profile}
external:
  launch:
    executable: {python}
    args: [{game}, --title, "Fake Game {{port}}", --log, "{{runtime}}/events.log" {extra_args}]
    version: {{args: [{game}, --version], pattern: "FakeGame (\\\\S+)", expect: "1.0"}}
    ready: {ready}
    stop_grace_s: 2
  display: {{xvfb: {xvfb}}}
  frames: {{window_title: "{title}", width: {width}, height: {height}, fps: 30, stall_timeout_s: {stall}}}
  input:
    device: xtest
    focus_settle_s: 0.1
    keyboard:
      left_stick: {{up: w, down: s, left: a, right: d}}
      right_stick: {{up: Up, down: Down, left: Left, right: Right}}
      buttons: {{A: space, B: e, ZR: mouse1}}
  start_states:
    start: {{}}
    other: {{}}
  default_start: start
"""


def fake_backend(folder: Path, name: str = "fake", xvfb: str = "never", width: int = 320, height: int = 180,
                 stall: float = 10.0, extra_args: str = "", profile: str | None = None, title: str = "^Fake Game",
                 ready: str = "{window: true, timeout_s: 30, settle_s: 0.0}") -> BackendProfile:
    from core.paths import PROFILES_DIR

    text = FAKE_BACKEND.format(name=name, python=sys.executable, game=GAME, xvfb=xvfb, width=width, height=height,
                               stall=stall, extra_args=extra_args, title=title, ready=ready,
                               profile=profile or PROFILES_DIR / "builtin_world.yaml")
    path = folder / f"{name}.yaml"
    path.write_text(text)
    return parse_backend(text, path)
