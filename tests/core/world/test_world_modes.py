"""Real-time mode, a world started by hand and attached to, and the channel's authentication."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import IO

import numpy as np
import pytest

from core.game import ipc
from core.game.builtin import BuiltinWorld
from core.game.connection import Capability
from core.game.errors import UnsupportedCapabilityError
from core.game.pad import PadState
from core.paths import PROJECT_ROOT
from tests.xserver import xvfb


def _wait_for(condition, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail("condition not reached in time")


def test_realtime_mode_runs_the_clock_without_requests():
    with BuiltinWorld.launch(mode="realtime", width=320, height=180, renderer="software") as world:
        assert world.info.mode == "realtime" and Capability.LIVE_INPUT in world.info.capabilities
        first = world.latest_frame()
        assert first.pixels.shape == (180, 320, 3)
        _wait_for(lambda: world.latest_frame().tick >= first.tick + 15)  # time moves on its own
        started = time.monotonic()
        result = world.hold(PadState(left_y=1.0), 0.5)
        assert time.monotonic() - started >= 0.4  # a hold plays out in game time, about wall time
        assert result.tick >= first.tick + 15
        world.set_pad(PadState(right_x=1.0))      # a human holding the right stick
        turned = world.latest_frame()
        _wait_for(lambda: world.latest_frame().tick >= turned.tick + 10)
        assert (world.latest_frame().pixels != turned.pixels).any()
        # The sound runs on with the clock, tick after tick, with no gap: a second of it, all there.
        now = world.latest_frame().tick
        sound = world.audio_ticks(now - 29, now).samples
        assert len(sound) == 30 * world.audio_info.samples_per_tick and np.abs(sound).max() > 0


def test_lockstep_worlds_refuse_live_input(world):
    with pytest.raises(UnsupportedCapabilityError, match="live_input"):
        world.set_pad(PadState())


def _started_by_hand(*options: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], IO[str]]:
    """`python main.py world OPTIONS` as a user starts it; its stderr goes to a file (a pipe nobody reads while
    the world runs could fill and stop it), with Python's faulthandler on for _stop_with_ctrl_c."""
    errors = tempfile.TemporaryFile("w+")  # noqa: SIM115 - outlives the process; closed by the caller
    process = subprocess.Popen([sys.executable, "main.py", "world", "--renderer", "software", *options],
                               cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=errors, text=True,
                               env={**os.environ, **(env or {}), "PYTHONFAULTHANDLER": "1"})
    return process, errors


def _stop_with_ctrl_c(process: subprocess.Popen[str], errors: IO[str]) -> int:
    """Ctrl+C, and the world's exit status; a world that does not end within 60 s fails with its stacks."""
    process.send_signal(signal.SIGINT)
    try:
        return process.wait(timeout=60)
    except subprocess.TimeoutExpired:  # rare on loaded CI machines: say where it was stuck
        process.send_signal(signal.SIGABRT)  # faulthandler prints every thread's stack to stderr
        process.wait(timeout=10)
        errors.seek(0)
        pytest.fail("the world did not exit on SIGINT within 60 s; its stacks:\n" + errors.read()[-6000:])


def _connection_file(process: subprocess.Popen[str]) -> Path:
    """The file a world started by hand prints for clients to attach with."""
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith("Attach with: "):
            return Path(line.removeprefix("Attach with: ").strip())
    raise AssertionError(f"the world printed no 'Attach with:' line (exit status {process.poll()})")


def _ended_by_hand(process: subprocess.Popen[str], errors: IO[str]) -> None:
    if process.poll() is None:
        process.kill()
    process.communicate()  # reaps it and closes its pipes
    errors.close()


def test_a_world_started_by_hand_can_be_attached_to_and_cleans_up():
    process, errors = _started_by_hand()
    try:
        connection_file = _connection_file(process)
        assert connection_file.exists()
        runtime_dir = connection_file.parent
        assert stat.S_IMODE(runtime_dir.stat().st_mode) == 0o700
        assert stat.S_IMODE(connection_file.stat().st_mode) == 0o600
        with BuiltinWorld.attach(connection_file) as world:
            world.reset("plaza")
            assert world.hold(PadState(left_y=1.0), 0.5).tick == 15
        endpoint = ipc.Endpoint.from_json(json.loads(connection_file.read_text())["endpoint"])
        impostor = ipc.Endpoint(endpoint.address, endpoint.family, b"not the key" * 3)
        with pytest.raises(ipc.AuthenticationError):
            ipc.connect(impostor)
        with BuiltinWorld.attach(connection_file) as again:  # turned the impostor away, serves the next client
            assert again.reset("harbor").tick == 0
        code = _stop_with_ctrl_c(process, errors)
        assert code == 0
        assert not runtime_dir.exists()
    finally:
        _ended_by_hand(process, errors)



def test_a_world_started_by_hand_and_terminated_releases_its_rings():
    """`kill PID` (SIGTERM), as `timeout` or a service manager ends it, cleans up like Ctrl+C: nothing of the
    world is left in /dev/shm."""
    process, errors = _started_by_hand()
    try:
        connection_file = _connection_file(process)
        with BuiltinWorld.attach(connection_file) as world:
            assert world.reset("plaza").tick == 0
        assert {p.name for p in connection_file.parent.iterdir()} >= {"frames.bin", "audio.bin"}
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
        assert not connection_file.parent.exists()
    finally:
        _ended_by_hand(process, errors)


def test_a_world_launched_for_one_client_admits_no_other(world):
    socket_path = Path(world._ring.path).parent / "game.sock"
    assert not socket_path.exists()  # it stopped listening once its owner connected
    assert world.reset("plaza").tick == 0


def test_the_frame_file_and_socket_are_private(world):
    folder = Path(world._ring.path).parent
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(Path(world._ring.path).stat().st_mode) == 0o600
    assert stat.S_IMODE((folder / "audio.bin").stat().st_mode) == 0o600
    assert not (folder / "endpoint.json").exists()  # the key file is deleted once connected




def _x_clients(display: str) -> int:
    """How many clients the X server at `display` has, this query's own connection included (X-Resource)."""
    from Xlib.display import Display

    connection = Display(display)
    try:
        return len(connection.res_query_clients().clients)
    finally:
        connection.close()


def test_a_software_world_never_connects_to_the_x_server_it_inherits():
    """Software frames are drawn offscreen: a world started with DISPLAY set (or, unset, beside an X server on
    :0, which Panda3D's X pipe opens by default) must not connect to it. One did, and when that server went away
    (another test's Xvfb, which takes :0 when it is free) worlds died of a fatal X error, at start-up or at exit
    (SIGABRT), in CI."""
    server = ExitStack()
    display = server.enter_context(xvfb("320x200x24"))
    alone = _x_clients(display)
    process, errors = _started_by_hand("--width", "320", "--height", "180", env={"DISPLAY": display})
    try:
        connection_file = _connection_file(process)
        with BuiltinWorld.attach(connection_file) as world:
            world.reset("plaza")
            assert world.hold(PadState(left_y=1.0), 0.5).tick == 15
            assert _x_clients(display) == alone  # the world is drawing, and not through X
            server.close()  # the X server goes away under the running world
            assert world.hold(PadState(left_y=1.0), 0.5).tick == 30
        assert _stop_with_ctrl_c(process, errors) == 0
    finally:
        server.close()
        _ended_by_hand(process, errors)
