"""Ryujinx and Legends: Z-A, tested up to the line that needs the real emulator.

What is real here: the backend file, the launch up to the point where the virtual pad is made, the
evaluator reading guest RAM from a process laid out like Ryujinx (an unlinked /dev/shm/Ryujinx-* file
mapped three times), the virtual pads down to the call into evdev / vgamepad, and Ryujinx's input
config. What is not (docs/ryujinx.md says so too): Ryujinx itself, the game, a real /dev/uinput or
ViGEm pad, and SDL's naming of our pad.
"""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path

import pytest

from core.backends.profile import load_backend
from core.evaluation.client import EvaluatorClient
from core.evaluation.profile import ProfileError, load_profile
from core.game.errors import GameStartError
from core.game.external import ryujinx_input
from core.game.external.game import ExternalGame
from core.game.external.pads import UinputPad, VgamepadPad, clamp_unit
from core.game.external.spec import Input
from core.game.pad import Button, PadState
from tests.external_support import needs_x11_tools, on_display, xvfb
from tests.fake_games.backends import GUEST_RAM_PROFILE as FAKE_PROFILE
from tests.fake_games.backends import fake_backend

__all__ = ["on_display", "xvfb"]  # fixtures



def test_the_ryujinx_backend_asks_for_what_only_its_owner_has(monkeypatch, tmp_path):
    backend = load_backend("ryujinx")
    assert backend.external.input.device == "pad" and backend.external.launch.input_config.kind == "ryujinx"
    with pytest.raises(ProfileError, match="template"):
        load_profile(backend.memory_profile_path).compiled_signature()  # the evaluator refuses it, as it must
    monkeypatch.setenv("DISPLAY", ":0")
    for name in ("POKEGYM_RYUJINX", "POKEGYM_ZA_GAME", "POKEGYM_RYUJINX_DATA"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(GameStartError, match="POKEGYM_RYUJINX"):
        ExternalGame.launch(backend.external, backend.name, backend.directory)


@pytest.mark.skipif(os.path.exists("/dev/uinput"), reason="this machine has /dev/uinput")
def test_without_uinput_the_launch_stops_before_the_emulator_with_what_to_do(monkeypatch, tmp_path):
    backend = load_backend("ryujinx")
    emulator = tmp_path / "Ryujinx"
    emulator.write_text(f"#!/bin/sh\ntouch {tmp_path}/started\n")
    emulator.chmod(0o755)
    monkeypatch.setenv("POKEGYM_RYUJINX", str(emulator))
    monkeypatch.setenv("POKEGYM_ZA_GAME", str(tmp_path / "za.nsp"))
    monkeypatch.setenv("POKEGYM_RYUJINX_DATA", str(tmp_path))
    monkeypatch.setenv("DISPLAY", os.environ.get("DISPLAY", ":0"))
    with pytest.raises(GameStartError, match="/dev/uinput does not exist"):
        ExternalGame.launch(backend.external, backend.name, backend.directory)
    assert not (tmp_path / "started").exists()  # the pad comes first: the emulator never started without it


@needs_x11_tools
def test_the_evaluator_reads_guest_ram_through_the_shm_file_of_a_ryujinx_like_process(tmp_path, on_display):
    profile = tmp_path / "fake_za.yaml"
    profile.write_text(FAKE_PROFILE)
    backend = fake_backend(tmp_path, extra_args=", --guest-ram", profile=str(profile))
    with ExternalGame.launch(backend.external, backend.name, backend.directory) as game:
        shm = _guest_ram_fd(game.pid)
        views = [line for line in Path(f"/proc/{game.pid}/maps").read_text().splitlines() if "/dev/shm/Ryujinx" in line]
        assert len(views) == 3  # the block, a base view and a mirror, as Ryujinx maps guest RAM
        allocated_before = os.stat(shm).st_blocks
        with EvaluatorClient.launch(game.pid, profile) as evaluator:
            evaluator.wait_locked(30)
            assert evaluator.status["candidates"] == 3  # one per view; the tracker keeps one
            start = evaluator.sample_after(time.time())
            game.hold(PadState(right_x=1.0), 0.6)  # the fake walks right while Right is held
            moved = evaluator.sample_after(time.time())
            assert moved.x > start.x + 1.0 and math.isclose(moved.y, start.y)
        # Scanning 64 MiB of guest RAM went through the file with SEEK_DATA: no page was allocated by reading.
        assert os.stat(shm).st_blocks == allocated_before


def _guest_ram_fd(pid: int) -> str:
    for fd in os.listdir(f"/proc/{pid}/fd"):
        if "/dev/shm/Ryujinx" in os.readlink(f"/proc/{pid}/fd/{fd}"):
            return f"/proc/{pid}/fd/{fd}"
    raise AssertionError("the fake has no guest RAM descriptor")


class FakeEvdev:
    """Stands in for python-evdev: records what the pad writes."""

    class ecodes:
        EV_KEY, EV_ABS = 1, 3
        ABS_X, ABS_Y, ABS_RX, ABS_RY, ABS_HAT0X, ABS_HAT0Y = 0, 1, 3, 4, 16, 17
        BTN_SOUTH, BTN_EAST, BTN_NORTH, BTN_WEST, BTN_TL, BTN_TR = 304, 305, 307, 308, 310, 311
        BTN_TL2, BTN_TR2, BTN_SELECT, BTN_START, BTN_THUMBL, BTN_THUMBR = 312, 313, 314, 315, 317, 318

    @staticmethod
    def AbsInfo(**kwargs: int) -> dict[str, int]:
        return kwargs

    def __init__(self) -> None:
        self.writes: list[tuple[int, int, int]] = []
        self.closed = False

    def UInput(self, capabilities, **kwargs):
        self.capabilities, self.options = capabilities, kwargs
        return self

    def write(self, kind: int, code: int, value: int) -> None:
        self.writes.append((kind, code, value))

    def syn(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True


def test_the_uinput_pad_maps_scales_and_releases_everything():
    evdev = FakeEvdev()
    spec = Input(device="uinput", pad_buttons={Button.A: "B"})
    pad = UinputPad(spec, evdev_module=evdev)
    assert evdev.options["vendor"] == 0x045E and evdev.options["product"] == 0x028E
    pad.apply(PadState(left_x=1.0, left_y=-0.5, right_x=-1.0, buttons=frozenset({Button.A, Button.DPAD_LEFT})))
    written = {(kind, code): value for kind, code, value in evdev.writes}
    assert written[(3, 0)] == 32767 and written[(3, 1)] == 16384 and written[(3, 3)] == -32767
    assert written[(1, 305)] == 1  # Switch A went out as the pad's east button (X360 B), as Ryujinx expects
    assert written[(3, 16)] == -1
    pad.close()
    released = {(kind, code): value for kind, code, value in evdev.writes}
    assert all(value == 0 for value in released.values()) and evdev.closed


class FakeVgamepad:
    class XUSB_BUTTON:
        XUSB_GAMEPAD_A, XUSB_GAMEPAD_B = 0x1000, 0x2000

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, object]]] = []

    def VX360Gamepad(self):
        return self

    def __getattr__(self, name: str):
        return lambda **kwargs: self.calls.append((name, kwargs))


def test_vgamepad_values_are_clamped_before_they_reach_the_driver():
    assert clamp_unit(1.01) == 1.0 and clamp_unit(-7) == -1.0 and clamp_unit(float("nan")) == 0.0
    vg = FakeVgamepad()
    pad = VgamepadPad(Input(device="vgamepad"), vgamepad_module=vg)
    state = PadState(left_x=1.2, left_y=-1.3, buttons=frozenset({Button.A}))  # PadState clamps too
    pad.apply(state)
    sticks = [kwargs for name, kwargs in vg.calls if name.endswith("joystick_float")]
    assert all(-1.0 <= v <= 1.0 for kwargs in sticks for v in kwargs.values())
    assert ("press_button", {"button": 0x1000}) in vg.calls
    pad.close()
    assert vg.calls[-2][0] == "reset" and vg.calls[-1][0] == "update"


def test_ryujinx_input_config_is_checked_and_fixed_keeping_the_mapping(tmp_path):
    our_id = ryujinx_input.uinput_pad_id("PokeGym Virtual Pad")
    assert ryujinx_input.names_our_pad(our_id)
    guid = our_id.split("-", 1)[1]
    assert ryujinx_input.dotnet_guid_text(ryujinx_input.dotnet_guid_bytes(guid)) == guid
    config = tmp_path / "Config.json"
    other = "0-03000000-4c05-0000-cc09-000000000000"  # someone's DualShock 4
    entry = {"version": 1, "backend": "GamepadSDL2", "id": other, "controller_type": "ProController",
             "player_index": "Player1", "right_joycon": {"button_a": "B"}}
    config.write_text(json.dumps({"input_config": [entry], "docked_mode": True}))
    with pytest.raises(GameStartError, match="not the virtual pad"):
        ryujinx_input.check_input_config(config)
    with pytest.raises(GameStartError, match="write: true"):
        ryujinx_input.check_input_config(config, expected_id=our_id)
    assert ryujinx_input.check_input_config(config, expected_id=our_id, write=True) == our_id
    fixed = json.loads(config.read_text())
    assert fixed["input_config"][0]["id"] == our_id and fixed["input_config"][0]["right_joycon"] == {"button_a": "B"}
    assert fixed["docked_mode"] is True and len(list(tmp_path.glob("Config.json.pokegym-*.bak"))) == 1
    assert ryujinx_input.check_input_config(config) == our_id
    config.write_text(json.dumps({"input_config": [{**entry, "backend": "WindowKeyboard"}]}))
    with pytest.raises(GameStartError, match="not bound to a gamepad"):
        ryujinx_input.check_input_config(config)
    with pytest.raises(GameStartError, match="does not exist"):
        ryujinx_input.check_input_config(tmp_path / "missing.json")

