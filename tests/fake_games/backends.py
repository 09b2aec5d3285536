"""Backend files for the fake window game (tests/fake_games/window_game.py), written into a test's folder."""

from __future__ import annotations

import sys
from pathlib import Path

from core.backends.profile import BackendProfile, parse_backend
from tests.fake_games.window_game import MAGIC

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
{start_states}
  default_start: start
"""
START_STATES = """    start: {}
    other: {}"""


# A memory profile for the fake's --guest-ram state block (x, y follow the arrow keys, as a Ryujinx game's would).
GUEST_RAM_PROFILE = f"""
format_version: 1
name: fake_za
game: a process laid out like Ryujinx's guest RAM (tests)
signature: {{pattern: "{' '.join(f'{b:02X}' for b in MAGIC)}", base_offset: 0}}
block_size: 28
scan_regions: {{perms: rw, path_contains: /dev/shm/Ryujinx}}
checksum: {{algorithm: crc32, start: 0, length: 24, field: checksum}}
fields:
  tick: {{offset: 8, type: u64}}
  x: {{offset: 16, type: f32, range: [-1000, 1000]}}
  y: {{offset: 20, type: f32, range: [-1000, 1000]}}
  checksum: {{offset: 24, type: u32}}
"""


def fake_backend(folder: Path, name: str = "fake", xvfb: str = "never", width: int = 320, height: int = 180,
                 stall: float = 10.0, extra_args: str = "", profile: str | None = None, title: str = "^Fake Game",
                 ready: str = "{window: true, timeout_s: 30, settle_s: 0.0}",
                 start_states: str = START_STATES) -> BackendProfile:
    """`start_states`: the YAML lines under external.start_states (indented by four), which must name `start`."""
    from core.paths import PROFILES_DIR

    text = FAKE_BACKEND.format(name=name, python=sys.executable, game=GAME, xvfb=xvfb, width=width, height=height,
                               stall=stall, extra_args=extra_args, title=title, ready=ready, start_states=start_states,
                               profile=profile or PROFILES_DIR / "builtin_world.yaml")
    path = folder / f"{name}.yaml"
    path.write_text(text)
    return parse_backend(text, path)
