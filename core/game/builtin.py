"""BuiltinWorld: the GameConnection to the built-in Panda3D town, run as a child process.

The harness sees only what an emulator would give it: frames from shared memory and a
virtual pad. Every call first checks that the world process is alive, and every wait is
bounded, so a dead or hung world raises GameDiedError instead of hanging the caller.
"""

from __future__ import annotations

import contextlib
import json
import math
import shutil
import subprocess
import time
from collections import deque
from collections.abc import Mapping, Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, NamedTuple, NoReturn

import numpy as np

from core.audio.clip import AudioClip
from core.game import child, ipc
from core.game.audio_ring import AudioFormat, AudioHeld, AudioRing
from core.game.connection import Capability, GameInfo, StepResult
from core.game.errors import (
    GameDiedError,
    GameError,
    GameStartError,
    InvalidPadError,
    InvalidStartStateError,
    RemoteGameError,
    UnknownStartStateError,
    UnsupportedCapabilityError,
)
from core.game.frames import BorrowedFrame, Frame, FrameRing, check_resolution
from core.game.pad import Button, PadState
from core.paths import DEFAULT_WORLD

KNOWN_CAPABILITIES = frozenset(c.value for c in Capability)  # a newer world may offer more; unknown ones are left out

START_TIMEOUT_S = 120.0
REQUEST_TIMEOUT_S = 120.0
_REMOTE_ERRORS: dict[str, type[GameError]] = {
    "InvalidPadError": InvalidPadError,
    "UnknownStartState": UnknownStartStateError,
    "BadStartState": InvalidStartStateError,
}


class StepTiming(NamedTuple):
    """How long steps took inside the world: wall seconds, CPU seconds, and the CPU seconds spent on sound."""

    seconds: float
    cpu_seconds: float
    synth_seconds: float


class BuiltinWorld:
    """A live connection to the built-in world (implements GameConnection)."""

    def __init__(self, conn: Connection, info: GameInfo, ring: FrameRing,
                 process: subprocess.Popen[bytes] | None, runtime_dir: Path | None,
                 stderr_tail: deque[str], camera: dict[str, float] | None = None,
                 audio: AudioRing | None = None, mixer: str | None = None) -> None:
        self._camera = camera or {}
        self._audio = audio
        self._mixer = mixer
        self._conn = conn
        self._info = info
        self._ring = ring
        self._process = process
        self._runtime_dir = runtime_dir
        self._stderr_tail = stderr_tail
        self._closed = False
        self._dead_reason: str | None = None

    # -- starting and attaching -----------------------------------------------------------
    @classmethod
    def launch(cls, world: Path = DEFAULT_WORLD, width: int = 640, height: int = 360, mode: str = "lockstep",
               renderer: str = "auto", start_timeout: float = START_TIMEOUT_S, audio: str = "on") -> BuiltinWorld:
        """Start a world process owned by this one; it exits if this process dies. audio="off": a silent world
        (no synthesis, no audio ring)."""
        check_resolution(width, height)
        if audio not in ("on", "off"):
            raise GameStartError(f"audio must be 'on' or 'off', got {audio!r}")
        stderr_tail: deque[str] = deque(maxlen=40)
        args = ["--world", str(world), "--width", str(width), "--height", str(height), "--mode", mode,
                "--renderer", renderer, "--audio", audio]
        conn, process, runtime_dir = child.spawn_and_connect("core.world", args, start_timeout,
                                                             stderr_tail, "world")
        return cls._handshake(conn, process, runtime_dir, stderr_tail)

    @classmethod
    def attach(cls, connection_file: Path) -> BuiltinWorld:
        """Connect to a world started by hand with `python main.py world`."""
        try:
            data = json.loads(Path(connection_file).read_text())
            endpoint = ipc.Endpoint.from_json(data["endpoint"])
        except (OSError, ValueError, KeyError) as exc:
            raise GameStartError(f"cannot read world connection file {connection_file}: {exc}") from None
        try:
            conn = ipc.connect(endpoint)
        except (OSError, ipc.AuthenticationError, ipc.ConnectionBusyError) as exc:
            raise GameStartError(f"cannot connect to the world at {endpoint.address}: {exc}. "
                                 "Is `python main.py world` still running?") from None
        return cls._handshake(conn, None, None, deque(maxlen=1))

    @classmethod
    def _handshake(cls, conn: Connection, process: subprocess.Popen[bytes] | None, runtime_dir: Path | None,
                   stderr_tail: deque[str]) -> BuiltinWorld:
        ipc.send_message(conn, {"op": "hello"})
        header, _ = ipc.receive_message(conn)
        sound: dict[str, Any] = header.get("audio") or {}
        audio = AudioRing.attach(Path(sound["path"])) if sound.get("enabled") else None
        info = GameInfo(
            name=header["name"], pid=header["pid"], mode=header["mode"], tick_hz=header["tick_hz"],
            width=header["width"], height=header["height"], start_states=tuple(header["start_states"]),
            capabilities=frozenset(Capability(c) for c in header["capabilities"] if c in KNOWN_CAPABILITIES),
            audio=audio.format if audio is not None else None,
            # A world that says it has sound, disabled, was started with `--audio off`; an older world says nothing.
            audio_switched_off=bool(header.get("audio")) and not sound.get("enabled"),
        )
        ring = FrameRing.attach(Path(header["frames_path"]))
        return cls(conn, info, ring, process, runtime_dir, stderr_tail, header.get("camera"), audio,
                   sound.get("mixer"))

    @property
    def launched_here(self) -> bool:
        """Whether this process started the world (and may end it), rather than attached to it."""
        return self._process is not None

    # -- GameConnection -------------------------------------------------------------------
    @property
    def info(self) -> GameInfo:
        return self._info

    @property
    def pid(self) -> int:
        return self._info.pid

    def latest_frame(self) -> Frame:
        self._check_alive()
        frame = self._ring.latest()
        if frame is None:
            raise GameError("the world has not published a frame yet")
        return frame

    def latest_frame_view(self) -> BorrowedFrame:
        """The newest frame without copying; check `intact()` after use (see docs/frame-ring.md)."""
        self._check_alive()
        view = self._ring.latest_view()
        if view is None:
            raise GameError("the world has not published a frame yet")
        return view

    @property
    def audio_info(self) -> AudioFormat | None:
        """The sound's format (rate, channels, samples per tick), or None when the world runs with sound off."""
        return self._info.audio

    @property
    def sound_mixer(self) -> str | None:
        """What mixes the world's sound: "compiled", or "numpy" where the install found no C compiler (the same
        samples, slower); None when the world is silent or too old to say."""
        return self._mixer

    def audio_ticks(self, first_tick: int, last_tick: int) -> AudioClip:
        """The exact PCM the world played during ticks first_tick..last_tick (inclusive): a step that went from
        tick t0 to t1 (its StepResult.tick) played ticks t0 + 1..t1. Ticks count from the last reset or restore.
        The ring keeps the last few seconds (AudioFormat and docs/audio-ring.md), so read right after the step;
        ticks no longer (or not yet) there raise AudioUnavailableError."""
        if self._audio is None:
            raise UnsupportedCapabilityError("this world runs with sound off (launched with audio='off' or "
                                             "`python main.py world --audio off`): it has no audio to read")
        self._check_alive()
        return AudioClip(self._audio.format.rate, self._audio.read(int(first_tick), int(last_tick)))

    def audio_held(self) -> AudioHeld | None:
        """The epoch and ticks the audio ring holds now (None: none yet, or sound off); reads shared memory only,
        so any thread may ask while another drives (the studio's speaker follows the ring this way)."""
        return self._audio.held() if self._audio is not None else None

    def hold(self, pad: PadState, seconds: float) -> StepResult:
        return self.hold_ticks(pad, self.ticks_for(seconds))

    def hold_ticks(self, pad: PadState, ticks: int) -> StepResult:
        if not isinstance(pad, PadState):  # pyright: ignore[reportUnnecessaryIsInstance]  # callers may pass any type
            raise InvalidPadError(f"hold() needs a PadState, got {type(pad).__name__}")
        return self._step({"op": "hold", "pad": pad.to_dict(), "ticks": int(ticks)})

    def press(self, button: Button, seconds: float = 0.1) -> StepResult:
        button = Button.parse(button) if isinstance(button, str) else button  # pyright: ignore[reportUnnecessaryIsInstance]  # callers may pass any type
        self.hold(PadState(buttons=frozenset({button})), seconds)
        return self.hold_ticks(PadState(), 1)  # release, so the next press is a new press

    def set_pad(self, pad: PadState) -> None:
        """Real time only: the pad state to apply on every tick until changed."""
        self._require(Capability.LIVE_INPUT)
        self._request({"op": "set_pad", "pad": pad.to_dict()})

    def reset(self, start_state: str | Mapping[str, Any]) -> StepResult:
        """A start state name of the world file, or an inline start {pos, facing, camera_yaw, camera_pitch,
        flags} (a task's captured start), which the world validates."""
        if isinstance(start_state, str):
            return self._step({"op": "reset", "start": start_state})
        if not isinstance(start_state, Mapping):  # pyright: ignore[reportUnnecessaryIsInstance]  # callers may pass any type
            raise InvalidStartStateError(f"reset() needs a start state name or a mapping, got "
                                         f"{type(start_state).__name__}")
        return self._step({"op": "reset", "start_spec": dict(start_state)})

    def snapshot(self) -> bytes:
        self._require(Capability.SAVE_STATES)
        _, payloads = self._request({"op": "snapshot"})
        return payloads[0]

    def restore(self, blob: bytes) -> StepResult:
        self._require(Capability.SAVE_STATES)
        if not isinstance(blob, (bytes, bytearray)):  # pyright: ignore[reportUnnecessaryIsInstance]  # callers may pass any type
            raise GameError("restore() needs the bytes returned by snapshot()")
        return self._step({"op": "restore"}, [bytes(blob)])

    def extra_views(self, yaw_offsets_deg: Sequence[float]) -> list[Frame]:
        self._require(Capability.EXTRA_VIEWS)
        header, payloads = self._request({"op": "views", "yaw_offsets": [float(y) for y in yaw_offsets_deg]})
        shape = (header["height"], header["width"], 3)
        return [Frame(np.frombuffer(p, np.uint8).reshape(shape).copy(), 0, header["tick"]) for p in payloads]

    def turn_camera(self, degrees: float) -> float:
        """Turn the camera by exactly `degrees` (positive: right) with the right stick; returns the game seconds
        it took. Whole ticks at a stick deflection chosen so the angle comes out exact."""
        self._require(Capability.TURN_CAMERA)
        rate, deadzone = self._camera.get("yaw_rate_deg"), self._camera.get("stick_deadzone", 0.0)
        if not rate or not math.isfinite(degrees):
            raise UnsupportedCapabilityError("this world did not say how fast its camera turns")
        if degrees == 0:
            return 0.0
        per_tick = rate / self._info.tick_hz
        ticks = math.ceil(abs(degrees) / per_tick - 1e-9)
        deflection = abs(degrees) / (ticks * per_tick)  # after the dead zone
        stick = deadzone + deflection * (1.0 - deadzone)
        self.hold_ticks(PadState(right_x=math.copysign(stick, degrees)), ticks)
        return ticks / self._info.tick_hz

    def map_outline(self) -> list[tuple[str, np.ndarray]]:
        """Footprints (kind, (N, 2) polygon) for the studio's map backdrop. Geometry, not game state:
        it is never part of an observation."""
        self._require(Capability.MAP_OUTLINE)
        header, _ = self._request({"op": "outline"})
        return [(str(shape["kind"]), np.asarray(shape["points"], dtype=float)) for shape in header["shapes"]]

    def simulate_game_restart(self) -> StepResult:
        """Built-in world only: move the state block in memory, as restarting a game in an emulator
        does, so that evaluators must find it again."""
        return self._step({"op": "relocate_state"})

    def ticks_for(self, seconds: float) -> int:
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds):  # pyright: ignore[reportUnnecessaryIsInstance]  # callers may pass any type
            raise InvalidPadError(f"a duration must be a finite number of seconds, got {seconds!r}")
        if not 0 < seconds <= 600:
            raise InvalidPadError(f"a duration must be more than 0 and at most 600 seconds, got {seconds}")
        return max(1, round(seconds * self._info.tick_hz))

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._process is not None and self._process.poll() is None:
            try:
                ipc.send_message(self._conn, {"op": "shutdown"})
                if self._conn.poll(5.0):
                    ipc.receive_message(self._conn)
            except (OSError, EOFError):
                pass  # already gone: nothing to shut down
        self._conn.close()
        self._ring.close()
        if self._audio is not None:
            self._audio.close()
        if self._process is not None:
            child.stop(self._process)
        if self._runtime_dir is not None:
            shutil.rmtree(self._runtime_dir, ignore_errors=True)

    def __enter__(self) -> BuiltinWorld:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- plumbing -------------------------------------------------------------------------
    def _require(self, capability: Capability) -> None:
        if capability not in self._info.capabilities:
            raise UnsupportedCapabilityError(f"this world ({self._info.mode}) does not offer {capability.value}")

    def _step(self, request: dict[str, Any], payloads: list[bytes] | None = None) -> StepResult:
        header, _ = self._request(request, payloads)
        return StepResult(frame_no=header["frame"], tick=header["tick"])

    def _check_alive(self) -> None:
        if self._closed:
            raise GameError("this world connection is closed")
        if self._dead_reason is not None:
            raise GameDiedError(self._dead_reason)
        if self._process is not None:
            code = self._process.poll()
            if code is not None:
                self._died(f"exited with {child.describe_exit(code)}")
        elif not child.pid_alive(self._info.pid):
            self._died("is no longer running")

    def _died(self, what: str) -> NoReturn:
        tail = "".join(self._stderr_tail).strip()
        detail = f"\nLast output of the world process:\n{tail[-2000:]}" if tail else ""
        self._dead_reason = (f"the world process (pid {self._info.pid}) {what}. Start a new one with "
                             f"BuiltinWorld.launch() or `python main.py world`.{detail}")
        raise GameDiedError(self._dead_reason)

    def time_steps(self, pads: list[dict[str, Any]], ticks: int) -> float:
        """For benchmarks: hold each pad for `ticks` inside the world process, timing only its own work (no IPC
        per step); returns the seconds it took there. The world's state moves on as if each had been held."""
        return self.time_steps_in_detail(pads, ticks).seconds

    def time_steps_in_detail(self, pads: list[dict[str, Any]], ticks: int, sound: bool = True) -> StepTiming:
        """time_steps, with the world's CPU time and the CPU time its sound took. sound=False: the same steps
        without making sound (its cost's baseline in the same process); the sound goes on afterwards."""
        header, _ = self._request({"op": "time_steps", "pads": pads, "ticks": ticks, "sound": sound})
        return StepTiming(float(header["seconds"]), float(header["cpu_seconds"]),
                          float(header.get("synth_seconds", 0.0)))

    def _request(self, header: dict[str, Any],
                 payloads: list[bytes] | None = None) -> tuple[dict[str, Any], list[bytes]]:
        self._check_alive()
        try:
            ipc.send_message(self._conn, header, payloads)
            deadline = time.monotonic() + REQUEST_TIMEOUT_S
            while not self._conn.poll(0.2):
                self._check_alive()
                if time.monotonic() > deadline:
                    self._died(f"did not answer {header.get('op')!r} within {REQUEST_TIMEOUT_S:.0f} s")
            reply, payloads = ipc.receive_message(self._conn)
        except (EOFError, ConnectionResetError, BrokenPipeError, OSError) as exc:
            if self._process is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):  # still running: report the broken channel
                    self._process.wait(timeout=2.0)
            self._check_alive()
            self._died(f"closed the connection ({type(exc).__name__})")
        if not reply.get("ok", False):
            error_type = _REMOTE_ERRORS.get(reply.get("kind", ""), RemoteGameError)
            raise error_type(reply.get("error", "the world rejected the request"))
        return reply, payloads
