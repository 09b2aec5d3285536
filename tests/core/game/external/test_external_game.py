"""ExternalGame on a fake windowed game under our own Xvfb: capture, input, focus, release, lifecycle.

The fake (tests/fake_games/window_game.py) is a real X11 client that logs every input event it gets;
it starts in a fraction of a second, so the lifecycle's corner cases are tested here and the real game
(Minetest, tests/core/game/external/test_minetest.py) is kept for what only a real game can show.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from core.game.connection import Capability
from core.game.errors import GameDiedError, InvalidStartStateError, UnsupportedCapabilityError
from core.game.external.game import ExternalGame
from core.game.external.launcher import VersionMismatchError
from core.game.external.x11 import X11Unavailable, XTestDevice, check_session
from core.game.pad import Button, PadState
from core.paths import PROJECT_ROOT
from tests.external_support import events, keys_down, needs_x11_tools, on_display, pid_running, wait_for, xvfb
from tests.fake_games.backends import fake_backend

pytestmark = needs_x11_tools
__all__ = ["on_display", "xvfb"]  # fixtures


def launch(backend, **kwargs) -> ExternalGame:
    return ExternalGame.launch(backend.external, backend.name, backend.directory, **kwargs)


def log_of(game: ExternalGame) -> list[str]:
    return events(game.runtime_dir / "events.log")


def test_frames_are_captured_scaled_and_keep_coming(tmp_path, on_display):
    backend = fake_backend(tmp_path, width=160, height=90)
    with launch(backend) as game:
        first = game.latest_frame()
        assert first.pixels.shape == (90, 160, 3) and first.pixels.dtype == np.uint8
        game.hold(PadState(), 0.3)
        later = game.latest_frame()
        assert later.frame_no > first.frame_no and later.tick > first.tick
        info = game.info
        assert info.mode == "realtime" and info.tick_hz == 30
        assert Capability.LOCKSTEP not in info.capabilities and Capability.SAVE_STATES not in info.capabilities
        assert Capability.EXTRA_VIEWS not in info.capabilities and Capability.TURN_CAMERA in info.capabilities
        stats = game.capture_stats()
        assert stats is not None and stats.method == "mss" and stats.frames >= later.frame_no


def test_hold_sends_the_mapped_keys_to_the_focused_window_and_releases_them(tmp_path, on_display):
    backend = fake_backend(tmp_path)
    with launch(backend) as game:
        device = game.input.device
        w, space, e = device.keycode("w"), device.keycode("space"), device.keycode("e")
        started = time.monotonic()
        game.hold(PadState(left_y=1.0, buttons=frozenset({Button.A})), 0.4)
        assert time.monotonic() - started >= 0.4  # wall time: the game runs on while we hold
        # The game handles X events on its own time: wait (with a deadline) for the key-ups to reach it.
        wait_for(lambda: {f"key {w} up", f"key {space} up"} <= set(log_of(game)), 5.0, "the key-ups to reach the game")
        log = log_of(game)
        assert f"key {w} down" in log and f"key {w} up" in log
        assert f"key {space} down" in log and f"key {space} up" in log
        assert f"key {e} down" not in log  # B was not pressed
        assert not keys_down(on_display) & {w, space}


def test_input_focus_is_taken_back_before_input(tmp_path, on_display):
    backend = fake_backend(tmp_path)
    with launch(backend) as game:
        device = game.input.device
        root = device._display.screen().root.id
        device.focus(root)  # someone clicked elsewhere
        assert device.focused_window() != game.window.window_id
        game.hold(PadState(left_x=1.0), 0.2)
        assert device.focused_window() == game.window.window_id
        assert f"key {device.keycode('d')} down" in log_of(game)


def test_an_error_inside_a_hold_still_releases_every_key(tmp_path, on_display):
    backend = fake_backend(tmp_path)
    with launch(backend) as game:
        w = game.input.device.keycode("w")

        def fail(seconds: float) -> None:
            raise KeyboardInterrupt  # Ctrl+C arriving in the middle of a hold

        game.wait_alive = fail
        with pytest.raises(KeyboardInterrupt):
            game.hold(PadState(left_y=1.0), 5.0)
        assert w not in keys_down(on_display)


def _child_holding_a_key(tmp_path, display: str) -> tuple[subprocess.Popen[str], int, Path]:
    """A separate Python process that launches the fake game and holds W until it is stopped."""
    backend_file = fake_backend(tmp_path, extra_args=", --child").path
    script = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(PROJECT_ROOT)!r})
        from core.backends.profile import load_backend
        from core.game.external.game import ExternalGame
        from core.game.pad import PadState
        backend = load_backend({str(backend_file)!r})
        game = ExternalGame.launch(backend.external, backend.name, backend.directory)
        game.set_pad(PadState(left_y=1.0))
        print("HOLDING", game.pid, game.runtime_dir, flush=True)
        try:
            while True:
                time.sleep(0.1)
        finally:
            game.close()
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "DISPLAY": display})
    assert child.stdout is not None
    line = child.stdout.readline().split()
    if not line or line[0] != "HOLDING":
        with child:  # closes its pipe and reaps it
            child.kill()
        raise AssertionError(f"the child did not start: {line}")
    return child, int(line[1]), Path(line[2]) / "events.log"


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_a_key_held_by_our_process_is_released_however_it_ends(tmp_path, on_display, how):
    child, pid, log = _child_holding_a_key(tmp_path, on_display)
    device = XTestDevice(on_display)
    with child:  # `with`: its pipe closed and it reaped however the test ends
        try:
            code = device.keycode("w")
            wait_for(lambda: code in keys_down(on_display), 5, "the child to hold W")
            helper = int(next(line.split()[1] for line in events(log) if line.startswith("child")))
            child.send_signal(how)
            child.wait(timeout=20)
            # SIGKILL and SIGTERM leave no time to clean up: the guard process releases the key and ends the game.
            wait_for(lambda: code not in keys_down(on_display), 10, "W to be released")
            wait_for(lambda: not pid_running(pid) and not pid_running(helper), 10, "the game and its child to end")
        finally:
            device.close()
            if child.poll() is None:
                child.kill()


def test_close_ends_exactly_the_processes_we_started(tmp_path, monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    backend = fake_backend(tmp_path, xvfb="always", extra_args=", --child")
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    try:
        game = launch(backend)
        xvfb_pid = game.launcher.xvfb.process.pid
        pid = game.pid
        helper = int(next(line.split()[1] for line in log_of(game) if line.startswith("child")))
        assert all(map(pid_running, (xvfb_pid, pid, helper)))
        game.close()
        assert not any(map(pid_running, (xvfb_pid, pid, helper)))
        assert bystander.poll() is None
        assert not game.runtime_dir.exists()
    finally:
        bystander.kill()
        bystander.wait()


def test_a_game_that_exits_raises_game_died_with_the_cause(tmp_path, on_display):
    backend = fake_backend(tmp_path)
    with launch(backend) as game:
        os.kill(game.pid, signal.SIGKILL)
        wait_for(lambda: not pid_running(game.pid), 5, "the game to die")
        with pytest.raises(GameDiedError, match=r"exited with signal SIGKILL"):
            game.hold(PadState(left_y=1.0), 0.2)
        with pytest.raises(GameDiedError):
            game.latest_frame()


def test_a_hung_game_is_declared_dead_after_the_stall_timeout(tmp_path, on_display):
    backend = fake_backend(tmp_path, stall=1.0)
    with launch(backend) as game:
        os.kill(game.pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            with pytest.raises(GameDiedError, match="no CPU time"):
                while time.monotonic() - started < 10:
                    game.latest_frame()  # the window still shows its last picture
                    time.sleep(0.1)
        finally:
            os.kill(game.pid, signal.SIGCONT)


def test_reset_restarts_a_fresh_process_and_frames_go_on(tmp_path, on_display):
    backend = fake_backend(tmp_path)
    with launch(backend) as game:
        restarted: list[int] = []
        game.on_restart(restarted.append)
        first_pid = game.pid
        game.reset("start")  # fresh: nothing happened since launch, so no new process
        assert game.pid == first_pid and not restarted
        before = game.latest_frame().frame_no
        game.hold(PadState(), 0.1)
        game.reset("start")
        assert game.pid != first_pid and restarted == [game.pid]
        assert not pid_running(first_pid)
        assert game.latest_frame().frame_no > before
        with pytest.raises(InvalidStartStateError, match="named start states only"):
            game.reset({"pos": [0, 0]})
        with pytest.raises(UnsupportedCapabilityError):
            game.snapshot()


def test_another_game_version_is_refused_with_both_versions_named(tmp_path, on_display, monkeypatch):
    monkeypatch.setenv("FAKE_GAME_VERSION", "FakeGame 2.0")
    backend = fake_backend(tmp_path)
    with pytest.raises(VersionMismatchError, match=r"version 2\.0, but .* made for version 1\.0"):
        launch(backend)


def test_a_wayland_session_without_x11_gets_a_clear_message(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    with pytest.raises(X11Unavailable, match="Wayland session without X11"):
        check_session(None)


def test_attaching_drives_a_running_game_and_leaves_it_running_on_close(tmp_path, on_display):
    from core.backends.session import check_readable
    from tests.fake_games.backends import GAME

    log = tmp_path / "events.log"
    running = subprocess.Popen([sys.executable, str(GAME), "--title", "Fake Game (started by hand)", "--log", str(log)],
                               env={**os.environ, "DISPLAY": on_display}, start_new_session=True)
    try:
        wait_for(lambda: any(line.startswith("ready") for line in events(log)), 20, "the game to start")
        backend = fake_backend(tmp_path)
        check_readable(running.pid)  # as root here; a refusal explains ptrace_scope (not testable as root)
        with ExternalGame.attach(backend.external, backend.name, backend.directory, pid=running.pid) as game:
            assert game.pid == running.pid and game.launcher is None
            assert Capability.START_STATES not in game.info.capabilities  # no relaunching a game we did not start
            game.hold(PadState(left_y=1.0), 0.2)
            assert f"key {game.input.device.keycode('w')} down" in events(log)
            with pytest.raises(UnsupportedCapabilityError, match="attached"):
                game.restart()
        assert running.poll() is None  # not ours to end
    finally:
        running.kill()
        running.wait()


def test_auto_runs_the_game_on_its_own_x_server_even_on_a_desktop(tmp_path, on_display):
    """With $DISPLAY set (the user's desktop), `xvfb: auto` still gives the game a server of its own, so a
    window raised on the desktop (the studio over the game) never reaches the frames; on the desktop itself
    (`never`) the same window is captured with the game, which is what auto avoids."""
    for mode, covered in (("auto", False), ("never", True)):
        (tmp_path / mode).mkdir()
        game = launch(fake_backend(tmp_path / mode, xvfb=mode))
        try:
            assert (game.launcher.xvfb is not None) == (mode == "auto")
            assert os.environ["DISPLAY"] == on_display  # the user's own display is left as it was
            assert game.frames_not_the_game() is None
            with _magenta_window_over_everything(on_display):
                game.hold(PadState(), 0.4)  # frames captured while the window is up
                pixels = game.latest_frame().pixels.astype(int)
                hidden = game.frames_not_the_game()
            magenta = (np.abs(pixels - (255, 0, 255)).max(axis=2) < 30).mean()
            assert (magenta > 0.5) == covered, (mode, magenta)
            # on the desktop the cover is seen and named; on our own server there is none to see
            assert (hidden is not None and "covers the game" in hidden) if covered else hidden is None
            assert game.frames_not_the_game() is None  # uncovered again
        finally:
            game.close()


@contextlib.contextmanager
def _magenta_window_over_everything(display_name: str):
    from Xlib import X, display

    desktop = display.Display(display_name)
    screen = desktop.screen()
    window = screen.root.create_window(0, 0, screen.width_in_pixels, screen.height_in_pixels, 0, screen.root_depth,
                                       background_pixel=screen.default_colormap.alloc_color(65535, 0, 65535).pixel,
                                       override_redirect=True)
    window.set_wm_name("Studio")
    window.map()
    window.configure(stack_mode=X.Above)
    desktop.sync()
    try:
        yield
    finally:
        window.destroy()
        desktop.close()
