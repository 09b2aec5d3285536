"""ExternalGame: a GameConnection to a real-time game we do not control: window frames in, input out.

Frames come from a capture thread that publishes into the same FrameRing the built-in world uses.
Input goes through one InputDevice (XTEST keys and mouse, a uinput pad, or vgamepad). hold() holds
for wall time and returns the newest frame captured after it. Capabilities are only what a window
and an input device give: LIVE_INPUT, START_STATES (by relaunching into a restored world or save)
and TURN_CAMERA (side views by turning the camera); never LOCKSTEP, SAVE_STATES or EXTRA_VIEWS.

Held input is released on every way out: close(), an error inside hold(), Ctrl+C (KeyboardInterrupt
runs the same finally blocks), interpreter exit (atexit) and, if we are killed outright, by the guard
process (guard.py).
"""

from __future__ import annotations

import atexit
import contextlib
import shutil
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from core.audio.clip import AudioClip
from core.game.audio_ring import AudioFormat, AudioHeld
from core.game.connection import Capability, GameInfo, StepResult
from core.game.errors import (
    GameDiedError,
    GameError,
    GameStartError,
    InvalidPadError,
    InvalidStartStateError,
    UnknownStartStateError,
    UnsupportedCapabilityError,
)
from core.game.external import x11
from core.game.external.attach import find_process
from core.game.external.capture import open_capture
from core.game.external.capture_loop import CaptureLoop, CaptureStats
from core.game.external.game_sound import GameSound
from core.game.external.guard_client import InputGuard
from core.game.external.inputs import InputDevice, XTestInput, make_input
from core.game.external.launcher import Launcher, Started, describe_output
from core.game.external.processes import CpuWatch, exit_status
from core.game.external.readiness import ReadyWait, wait_for_log_text
from core.game.external.spec import ExternalSpec, FileCopy, MacroStep
from core.game.frames import BorrowedFrame, Frame, FrameRing
from core.game.pad import Button, PadState

_LIVE: weakref.WeakSet[ExternalGame] = weakref.WeakSet()
STABLE_MEAN_DIFF = 0.5  # mean absolute pixel difference below which two frames count as the same picture
TURN_QUIET_S = 0.15      # after a camera turn, the picture must be still this long before a view is taken
TURN_SETTLE_MAX_S = 2.0  # (a game whose picture never stops moving costs at most this much)


@atexit.register
def _release_everything_at_exit() -> None:
    for game in list(_LIVE):
        with contextlib.suppress(Exception):
            game.close()


class ExternalGame:
    """A live external game (implements GameConnection)."""

    def __init__(self, spec: ExternalSpec, name: str, backend_dir: Path, width: int, height: int) -> None:
        self.spec = spec
        self.name = name
        self.backend_dir = backend_dir
        self.width, self.height = width, height
        self.runtime_dir = Path(tempfile.mkdtemp(prefix=f"pokegym-{name}-"))
        self.launcher: Launcher | None = None
        self.started: Started | None = None
        self.attached_pid: int | None = None
        self.display: str | None = None
        self.window: x11.WindowInfo | None = None
        self.ring: FrameRing | None = None
        self.capture: CaptureLoop | None = None
        self.input: InputDevice | None = None
        self.guard: InputGuard | None = None
        self.sound = GameSound(spec.audio)
        self.version: str | None = None
        self._closed = False
        self._dead_reason: str | None = None
        self._fresh_start: str | None = None
        self._io = threading.RLock()  # one hold / reset / restart at a time
        self._focused_at = 0.0
        self._restart_listeners: list[Callable[[int], None]] = []
        self._current_start: str | None = None
        self._cpu: CpuWatch | None = None
        _LIVE.add(self)

    # -- starting -------------------------------------------------------------------------
    @classmethod
    def launch(cls, spec: ExternalSpec, name: str, backend_dir: Path, start_state: str | None = None,
               width: int | None = None, height: int | None = None, version_expect: str | None = None,
               extra_files: Sequence[FileCopy] = ()) -> ExternalGame:
        """Start the game as our child (in our own Xvfb when there is no display) and connect to it."""
        game = cls(spec, name, backend_dir, width or spec.frames.width, height or spec.frames.height)
        try:
            game.launcher = Launcher(spec, backend_dir, game.runtime_dir, game.width, game.height, tuple(extra_files))
            game.display = game.launcher.prepare_display()
            game.version = game.launcher.check_version(version_expect, f"{name} backend's memory profile")
            game.guard = InputGuard(game.display)
            if game.launcher.xvfb is not None:
                game.guard.say(f"group {game.launcher.xvfb.process.pid}")
            game.input = make_input(spec, game.display)  # before the game: emulators look for pads at boot
            keys, buttons = game.input.held_codes()
            game.guard.say("keys " + " ".join(map(str, keys)))
            game.guard.say("buttons " + " ".join(map(str, buttons)))
            game._check_input_config()
            game.sound = GameSound.start(spec.audio, game.runtime_dir, spec.frames.fps, game.guard, game.launcher,
                                         name)
            game._start_process(start_state or spec.default_start)
        except BaseException:
            game.close()
            raise
        return game

    @classmethod
    def attach(cls, spec: ExternalSpec, name: str, backend_dir: Path, pid: int | None = None) -> ExternalGame:
        """Drive a game someone else started (found by pid, process name or window title)."""
        if spec.attach is None and pid is None:
            raise GameStartError(f"the {name} backend has no `attach` section; give a pid")
        game = cls(spec, name, backend_dir, spec.frames.width, spec.frames.height)
        try:
            game.display = None if sys.platform == "win32" else x11.check_session(None)
            game.attached_pid = pid or find_process(spec)
            game._cpu = CpuWatch(game.attached_pid) if sys.platform.startswith("linux") else None
            game.guard = InputGuard(game.display)
            game.input = make_input(spec, game.display)
            keys, buttons = game.input.held_codes()
            game.guard.say("keys " + " ".join(map(str, keys)))
            game.guard.say("buttons " + " ".join(map(str, buttons)))
            game.sound = GameSound.start(spec.audio, game.runtime_dir, spec.frames.fps, game.guard, None, name)
            game._connect_window(time.monotonic() + 10.0)
        except BaseException:
            game.close()
            raise
        return game

    def _check_input_config(self) -> None:
        binding = self.spec.launch.input_config if self.spec.launch is not None else None
        if binding is None:
            return
        from core.game.external import ryujinx_input

        assert self.launcher is not None
        expected = getattr(self.input, "ryujinx_id", None)
        ryujinx_input.check_input_config(Path(self.launcher.subs.fill(binding.path)).expanduser(), binding.player,
                                         expected, binding.write)

    def _start_process(self, start_state: str | None) -> None:
        assert self.launcher is not None
        restore = self.spec.start_states[start_state].restore if start_state else []
        started = self.launcher.start(restore)
        self.started = started
        self._cpu = CpuWatch(started.process.pid) if sys.platform.startswith("linux") else None
        self._dead_reason = None
        if self.guard is not None:
            self.guard.say(f"group {started.process.pid}")
        ready = self.launcher.launch_spec.ready
        wait = ReadyWait(started, ready, self.name,
                         Path(self.launcher.subs.fill(ready.log_file)) if ready.log_file else None)
        wait_for_log_text(wait)
        self._connect_window(wait.deadline, wait)
        self._current_start = start_state
        time.sleep(ready.settle_s)
        self._wait_stable(ready.stable_s, wait.deadline, wait)
        if start_state and self.spec.start_states[start_state].macro:
            self._run_macro(self.spec.start_states[start_state].macro)
            if self.spec.launch is not None:  # what the macro did on screen (a menu closing, a message) settles too
                self._wait_stable(self.spec.launch.ready.stable_s, time.monotonic() + 10.0)
        self._fresh_start = start_state

    def _connect_window(self, deadline: float, wait: ReadyWait | None = None) -> None:
        """Find the game's window (its pid's first) and start capturing it. Launched (`wait`): the readiness
        wait says which window it looks for and which there are; attached: the same, once, at `deadline`."""
        frames = self.spec.frames
        window = None
        if sys.platform != "win32":
            assert self.display is not None
            display = x11.open_display(self.display)
            try:
                if wait is not None:
                    wait.waiting_for(lambda: self._window_wanted(display))
                while window is None:
                    found = x11.find_windows(display, frames.window_title, self.pid)
                    window = found[0] if found else None
                    if window is None:
                        if wait is not None:
                            wait.check()
                        self._check_alive()
                        if wait is None and time.monotonic() > deadline:
                            raise GameStartError(f"no {self._window_wanted(display)}")
                        time.sleep(0.05)
            finally:
                display.close()
            if wait is not None:
                wait.done(f"its window {window.title!r} is shown")
        self.window = window
        if self.ring is None:
            self.ring = FrameRing.create(self.runtime_dir / "frames.ring", self.width, self.height)
        method, display_name = frames.method, self.display
        window_id = window.window_id if window else None
        self.capture = CaptureLoop(lambda: open_capture(method, display_name, window_id, frames.window_title,
                                                        frames.crop), self.ring, frames.fps)
        self.capture.wait_started(max(1.0, deadline - time.monotonic()))
        self.sound.use_clock(self.capture.tick_at)  # a new process, a new clock: its sound is a new epoch
        self.ensure_focus(force=True)

    def _window_wanted(self, display: Any) -> str:
        """The window looked for and the windows there are instead, for a user to pick the right title from."""
        return (f"window titled like {self.spec.frames.window_title!r} (frames.window_title, a regex) on "
                f"{self.display}; windows shown there now: {x11.describe_windows(x11.list_windows(display))}")

    # -- GameConnection -------------------------------------------------------------------
    @property
    def info(self) -> GameInfo:
        capabilities = {Capability.LIVE_INPUT, Capability.TURN_CAMERA}
        if self.launcher is not None and self.spec.start_states:
            capabilities.add(Capability.START_STATES)
        audio = self.sound.format
        if audio is not None:
            capabilities.add(Capability.AUDIO)
        return GameInfo(name=self.name, pid=self.pid, mode="realtime", tick_hz=self.spec.frames.fps,
                        width=self.width, height=self.height, start_states=tuple(self.spec.start_states),
                        capabilities=frozenset(capabilities), audio=audio)

    @property
    def audio_info(self) -> AudioFormat | None:
        """The captured sound's format; None when the game is silent to us (`sound.problem` says why)."""
        return self.sound.format

    def audio_ticks(self, first_tick: int, last_tick: int) -> AudioClip:
        """The sound captured over ticks first_tick..last_tick (the frames' ticks), waiting briefly for the
        recorder, which runs a few tens of milliseconds behind the game. Raises AudioUnavailableError."""
        if self.sound.format is None:
            why = self.sound.problem or (self.sound.capture.problem if self.sound.capture else None) \
                or "its backend sets no external.audio source"
            raise UnsupportedCapabilityError(f"{self.name} has no sound to read: {why}")
        return self.sound.read(int(first_tick), int(last_tick))

    def audio_held(self) -> AudioHeld | None:
        """The epoch and ticks the capture's ring holds now (None: none yet, or no sound); shared memory only."""
        capture = self.sound.capture
        return capture.ring.held() if capture is not None and self.sound.format is not None else None

    @property
    def pid(self) -> int:
        if self.started is not None:
            return self.started.process.pid
        return self.attached_pid or 0

    def latest_frame(self) -> Frame:
        self._check_alive()
        assert self.ring is not None
        frame = self.ring.latest()
        if frame is None:
            raise GameError("no frame has been captured yet")
        return frame

    def latest_frame_view(self) -> BorrowedFrame:
        self._check_alive()
        assert self.ring is not None
        view = self.ring.latest_view()
        if view is None:
            raise GameError("no frame has been captured yet")
        return view

    def hold(self, pad: PadState, seconds: float) -> StepResult:
        if not isinstance(pad, PadState):  # pyright: ignore[reportUnnecessaryIsInstance]  # callers may pass any type
            raise InvalidPadError(f"hold() needs a PadState, got {type(pad).__name__}")
        seconds = _checked_seconds(seconds)
        with self._io:
            self._check_alive()
            self._fresh_start = None
            self.ensure_focus()
            assert self.input is not None
            token = self.input.begin_hold()
            try:
                self.input.apply(pad)
                self.wait_alive(seconds)
                self.input.end_hold(token, pad, seconds)
            finally:
                self.input.apply(PadState())
            return self._frame_after(time.monotonic())

    def press(self, button: Button, seconds: float = 0.1) -> StepResult:
        button = Button.parse(button) if isinstance(button, str) else button  # pyright: ignore[reportUnnecessaryIsInstance]  # callers may pass any type
        return self.hold(PadState(buttons=frozenset({button})), seconds)

    def set_pad(self, pad: PadState) -> None:
        """Real time: hold this pad state until changed (the studio's human driving)."""
        with self._io:
            self._check_alive()
            self._fresh_start = None
            self.ensure_focus()
            assert self.input is not None
            self.input.apply(pad)

    def turn_camera(self, degrees: float) -> float:
        """Turn the camera by `degrees` (positive: right) and wait for a frame that shows it.

        Returns the seconds of game time it cost (real time passes in an external game while it turns)."""
        with self._io:
            self._check_alive()
            self._fresh_start = None
            self.ensure_focus()
            assert self.input is not None
            began = time.monotonic()
            if not self.input.turn_camera(degrees):
                rate = self.spec.input.turn_degrees_per_s
                if rate is None:
                    raise UnsupportedCapabilityError(f"the {self.name} backend cannot turn its camera by an angle: "
                                                     "give input.mouse.degrees_per_px or input.turn_degrees_per_s")
                pad = PadState(right_x=1.0 if degrees > 0 else -1.0)
                try:
                    self.input.apply(pad)
                    self.wait_alive(abs(degrees) / rate)
                finally:
                    self.input.apply(PadState())
            # The game applies pointer motion on its next frame, which may be slow (new terrain to draw): wait
            # until the picture has stopped changing, so the frame the caller takes next shows the whole turn.
            self._frame_after(time.monotonic() + 2.0 / self.spec.frames.fps)
            self._wait_stable(TURN_QUIET_S, time.monotonic() + TURN_SETTLE_MAX_S)
            return time.monotonic() - began

    def reset(self, start_state: str | Mapping[str, Any]) -> StepResult:
        if not isinstance(start_state, str):
            raise InvalidStartStateError(f"the {self.name} backend takes named start states only "
                                         f"({', '.join(self.spec.start_states) or 'none defined'}); a game we do "
                                         "not control cannot place its character at arbitrary coordinates")
        if start_state not in self.spec.start_states:
            raise UnknownStartStateError(f"unknown start state {start_state!r} for {self.name}; the backend "
                                         f"defines {sorted(self.spec.start_states)}")
        with self._io:
            if self._fresh_start == start_state:
                return self._frame_after(time.monotonic())
            spec = self.spec.start_states[start_state]
            if self.launcher is None:
                if spec.restore or spec.relaunch:
                    raise UnsupportedCapabilityError(f"start state {start_state!r} needs a fresh launch, but this "
                                                     "game was attached to, not launched")
                self._run_macro(spec.macro)
            elif spec.relaunch or self._current_start != start_state:
                self.restart(start_state)
            else:
                self._run_macro(spec.macro)
            self._fresh_start = start_state
            return self._frame_after(time.monotonic())

    def restart(self, start_state: str | None = None) -> int:
        """End the game process we started and launch a fresh one (same display); returns its pid."""
        if self.launcher is None:
            raise UnsupportedCapabilityError("an attached game cannot be restarted by us")
        with self._io:
            self._stop_game_process()
            self._start_process(start_state if start_state is not None else self._current_start)
            pid = self.pid
        for listener in list(self._restart_listeners):
            listener(pid)
        return pid

    def on_restart(self, listener: Callable[[int], None]) -> None:
        """Call `listener(new_pid)` after every restart (an evaluator must follow the new process)."""
        self._restart_listeners.append(listener)

    def snapshot(self) -> bytes:
        raise UnsupportedCapabilityError(f"{self.name} has no save states we can take from outside")

    def restore(self, blob: bytes) -> StepResult:
        raise UnsupportedCapabilityError(f"{self.name} has no save states we can take from outside")

    def extra_views(self, yaw_offsets_deg: Sequence[float]) -> list[Frame]:
        raise UnsupportedCapabilityError(f"{self.name} cannot render other views without turning its camera; "
                                         "use side views by turning (core/game/side_views.py)")

    def frames_not_the_game(self) -> str | None:
        """Why the frames may show something else than the game (a window over it, the game minimized), or
        None. Only a game on the user's display can be covered: on our own Xvfb nothing else is drawn."""
        on_our_server = self.launcher is not None and self.launcher.xvfb is not None
        if self.window is None or on_our_server or sys.platform == "win32":
            return None
        assert self.display is not None
        return x11.what_hides(self.display, self.window.window_id)

    def capture_stats(self) -> CaptureStats | None:
        return self.capture.stats() if self.capture is not None else None

    @property
    def input_description(self) -> str:
        return self.input.description if self.input is not None else "none"

    # -- ending ---------------------------------------------------------------------------
    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if self.input is not None:
                with contextlib.suppress(Exception):
                    self.input.close()  # releases everything it holds first
            self._stop_game_process()
            self.sound.close()
            if self.launcher is not None:
                self.launcher.close()
            if self.ring is not None:
                self.ring.close()
        finally:
            if self.guard is not None:
                self.guard.close()
            shutil.rmtree(self.runtime_dir, ignore_errors=True)
            _LIVE.discard(self)

    def __enter__(self) -> ExternalGame:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _stop_game_process(self) -> None:
        if self.input is not None:
            with contextlib.suppress(Exception):
                self.input.release_all()
        if self.capture is not None:
            self.capture.stop()
            self.capture = None
        if self.started is not None and self.launcher is not None:
            pgid = self.started.process.pid
            self.launcher.stop(self.started)
            if self.guard is not None:
                self.guard.say(f"ungroup {pgid}")

    # -- plumbing -------------------------------------------------------------------------
    def wait_alive(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            time.sleep(min(remaining, 0.05))
            self._check_alive()

    def _frame_after(self, moment: float) -> StepResult:
        assert self.capture is not None and self.ring is not None
        while True:
            frame_no = self.capture.wait_frame_after(moment, timeout=0.5)
            self._check_alive()
            if frame_no is not None:
                view = self.ring.latest_view()
                tick = view.frame.tick if view is not None else self.capture.tick_at(moment)
                return StepResult(frame_no=frame_no, tick=tick)

    def ensure_focus(self, force: bool = False) -> None:
        """Give the game window input focus when it lacks it, then let the settle time pass (FACTS' trap)."""
        if self.window is None or not isinstance(self.input, XTestInput):
            return
        device = self.input.device
        if not force and device.focused_window() == self.window.window_id:
            return
        device.focus(self.window.window_id)
        time.sleep(self.spec.input.focus_settle_s)

    def _wait_stable(self, stable_s: float, deadline: float, wait: ReadyWait | None = None) -> None:
        """Wait until the picture has stopped changing for `stable_s` (the world has finished drawing)."""
        if stable_s <= 0:
            return
        assert self.ring is not None
        previous = self.latest_frame().pixels.astype(np.int16)
        still_since = time.monotonic()
        period = 1.0 / self.spec.frames.fps
        if wait is not None:
            wait.waiting_for(f"the picture to stay still for {stable_s:g} s (launch.ready.stable_s)")
        while time.monotonic() - still_since < stable_s:
            if time.monotonic() > deadline:
                return  # a world that keeps moving (water, animals) is still usable: go on
            if wait is not None:
                wait.check()
            time.sleep(min(0.1, 2 * period))
            current = self.latest_frame().pixels.astype(np.int16)
            if float(np.abs(current - previous).mean()) > STABLE_MEAN_DIFF:
                still_since = time.monotonic()
            previous = current

    def _run_macro(self, macro: list[MacroStep]) -> None:
        from core.game.external.macros import run_macro

        run_macro(self, macro)

    def _check_alive(self) -> None:
        if self._closed:
            raise GameError(f"this {self.name} connection is closed")
        if self._dead_reason is not None:
            raise GameDiedError(self._dead_reason)
        if self.started is not None:
            code = exit_status(self.started.process)
            if code is not None:
                self._died(f"exited with {_describe_exit(code)}")
        elif self.attached_pid is not None:
            from core.game.child import pid_alive

            if not pid_alive(self.attached_pid):
                self._died("is no longer running")
        if self.launcher is not None and self.launcher.xvfb is not None and not self.launcher.xvfb.alive():
            self._died("lost its X server (our Xvfb exited)")
        stall = self.spec.frames.stall_timeout_s
        if self.capture is not None:
            silent = self.capture.seconds_since_frame()
            if silent > stall:
                self._died(f"gave no frame for {silent:.0f} s ({self.capture.error or 'capture stalled'})")
        if self._cpu is not None:
            idle = self._cpu.idle_seconds()
            if idle > stall:
                self._died(f"has used no CPU time for {idle:.0f} s: it hangs or was stopped (its window shows only "
                           "its last picture)")

    def _died(self, what: str) -> NoReturn:
        detail = describe_output(self.started) if self.started is not None else ""
        self._dead_reason = (f"the {self.name} game process (pid {self.pid}) {what}. Start it again (the studio's "
                             f"Restart game, or a new run).\n{detail}").strip()
        if self.input is not None:
            with contextlib.suppress(Exception):
                self.input.release_all()
        raise GameDiedError(self._dead_reason)


def _describe_exit(code: int) -> str:
    from core.game.child import describe_exit

    return describe_exit(code)


def _checked_seconds(seconds: float) -> float:
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds == seconds:  # pyright: ignore[reportUnnecessaryIsInstance]  # callers may pass any type
        raise InvalidPadError(f"a duration must be a finite number of seconds, got {seconds!r}")
    if not 0 < seconds <= 600:
        raise InvalidPadError(f"a duration must be more than 0 and at most 600 seconds, got {seconds}")
    return float(seconds)
