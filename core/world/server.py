"""The world process: serves the game over the authenticated channel, in lockstep or real time.

Started by a client (`python -m core.world --runtime-dir DIR --owner-pid PID`), it reads the
endpoint the client prepared in DIR/endpoint.json, creates DIR/frames.bin, and prints one
READY line. Started by hand (`python main.py world`), it makes its own private directory and
writes DIR/connection.json for clients to attach with.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import signal
import sys
import threading
import time
import zlib
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, NoReturn, TypeGuard, cast

from pydantic import ValidationError

from core.game import child, ipc
from core.game.errors import InvalidPadError
from core.game.pad import PadState
from core.world.content import StartState, WorldSpec
from core.world.game import BadStartState, UnknownStartState, World
from core.world.outline import world_outline
from core.world.panda_setup import RendererChoice
from core.world.simulation import GameState
from core.world.stop_signals import defer_in_this_thread, take_in_this_thread

WORLD_VERSION = "1"
MAX_HOLD_TICKS = 30 * 60 * 10  # ten minutes of game time in one request is surely a bug


@dataclass
class _Pending:
    """Real time: a hold request still being played out, answered when its ticks are done."""

    pad: PadState
    ticks_left: int


class RequestError(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class WorldServer:
    def __init__(self, world: World, endpoint: ipc.Endpoint, mode: str, owner_pid: int | None) -> None:
        self.world = world
        self.endpoint = endpoint
        self.mode = mode
        self.owner_pid = owner_pid
        self.listener = ipc.listen(endpoint)
        self.running = True
        self.live_pad = PadState()
        self.pending: _Pending | None = None

    # -- request handling ---------------------------------------------------------------
    def info(self) -> dict[str, Any]:
        spec = self.world.spec
        capabilities = ["save_states", "extra_views", "start_states", "map_outline", "turn_camera", "state_tick"]
        capabilities.append("lockstep" if self.mode == "lockstep" else "live_input")
        sound = self.world.sound
        if sound is not None:
            capabilities.append("audio")
        return {
            "name": spec.name, "pid": os.getpid(), "mode": self.mode, "tick_hz": spec.tick_hz,
            "width": self.world.ring.width, "height": self.world.ring.height,
            "frames_path": str(self.world.ring.path), "start_states": list(spec.start_states),
            "capabilities": capabilities, "world_version": WORLD_VERSION,
            "protocol_version": ipc.IPC_PROTOCOL_VERSION, "renderer": self.world.renderer.display_module,
            # How the right stick turns the camera, so a client can turn it by an exact angle (side views).
            "camera": {"yaw_rate_deg": spec.character.camera_yaw_rate_deg,
                       "stick_deadzone": spec.character.stick_deadzone},
            # Whether the world makes sound, and where and in what format (docs/audio-ring.md).
            "audio": {"enabled": False} if sound is None else {
                "enabled": True, "path": str(sound.ring.path), "rate": sound.format.rate,
                "channels": sound.format.channels, "samples_per_tick": sound.format.samples_per_tick,
                "ring_ticks": sound.ring.capacity,
                # its mixer's sample loops: "compiled", or "numpy" where the install found no C compiler (the
                # same samples, more of the step's time: bench world reports it beside the sound's cost)
                "mixer": sound.mixer.kernel.name},
        }

    def handle(self, header: dict[str, Any]) -> tuple[dict[str, Any], list[bytes]] | None:
        op = header.get("op")
        world = self.world
        if op == "hello":
            return self.info(), []
        if op == "hold":
            pad = _pad(header.get("pad"))
            ticks = _ticks(header.get("ticks"))
            if self.mode == "realtime":
                self.pending = _Pending(pad, ticks)
                return None  # answered by the real-time loop when the ticks have elapsed
            return self._frame_reply(world.advance(pad, ticks)), []
        if op == "set_pad":
            self.live_pad = _pad(header.get("pad"))
            return {"ok": True}, []
        if op == "reset":
            try:
                return self._frame_reply(world.reset(_start(header))), []
            except UnknownStartState as exc:
                raise RequestError("UnknownStartState", str(exc.args[0])) from None
            except BadStartState as exc:
                raise RequestError("BadStartState", str(exc)) from None
        if op == "snapshot":
            return {"ok": True}, [seal_state(world.spec.name, world.state)]
        if op == "restore":
            payloads: list[bytes] = header.get("_payloads") or []
            if len(payloads) != 1:
                raise RequestError("BadSnapshot", "restore needs exactly one save-state payload")
            return self._frame_reply(world.restore(unseal_state(world.spec.name, payloads[0]))), []
        if op == "views":
            offsets = header.get("yaw_offsets")
            if not _angle_list(offsets):
                raise RequestError("BadRequest", "yaw_offsets must be a list of at most 8 finite angles in degrees")
            # Offsets arrive clockwise-positive (+90 = right view); headings turn counter-clockwise.
            frames = [world.compose(-float(o)) for o in offsets]
            reply = {"ok": True, "tick": world.state.tick, "width": world.ring.width, "height": world.ring.height}
            return reply, [f.tobytes() for f in frames]
        if op == "time_steps":
            # For `bench world`: the same lockstep steps, timed inside this process, so the harness can
            # compare the connection's cost against the bare work within one run and one process.
            # "sound": false times them without making sound, the baseline for the sound's cost in this process.
            pads = [_pad(p) for p in cast("list[object]", header.get("pads") or [])]
            ticks = _ticks(header.get("ticks"))
            sound = header.get("sound", True)
            if not isinstance(sound, bool):
                raise RequestError("BadRequest", f"sound must be true or false, got {sound!r}")
            synth = world.sound.synth_seconds if world.sound is not None else 0.0
            with contextlib.nullcontext() if sound else world.silenced():
                started, cpu = time.perf_counter(), time.process_time()
                for pad in pads:
                    world.advance(pad, ticks)
                seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
            synth = world.sound.synth_seconds - synth if world.sound is not None else 0.0
            # cpu_seconds: this process's own work, which other programs on a shared machine do not inflate
            return {"ok": True, "seconds": seconds, "cpu_seconds": cpu, "steps": len(pads), "synth_seconds": synth}, []
        if op == "outline":
            # For the studio's map backdrop only; agents never see it (it is geometry, not state).
            return {"ok": True, "shapes": world_outline(world.simulation.collision.obstacles)}, []
        if op == "relocate_state":
            return self._frame_reply(world.relocate_state()), []
        if op == "shutdown":
            self.running = False
            return {"ok": True}, []
        raise RequestError("BadRequest", f"unknown operation {op!r}")

    def _frame_reply(self, frame_no: int) -> dict[str, Any]:
        return {"ok": True, "frame": frame_no, "tick": self.world.state.tick}

    def _answer(self, conn: Connection, header: dict[str, Any]) -> None:
        """Handle one request and send the reply (real-time holds reply later, from the loop)."""
        reply: tuple[dict[str, Any], list[bytes]] | None
        try:
            reply = self.handle(header)
        except (RequestError, InvalidPadError) as exc:
            kind = exc.kind if isinstance(exc, RequestError) else "InvalidPadError"
            reply = ({"ok": False, "kind": kind, "error": str(exc)}, [])
        if reply is not None:
            ipc.send_message(conn, *reply)

    # -- loops --------------------------------------------------------------------------
    def owner_alive(self) -> bool:
        # pid_alive counts a zombie as dead: an owner killed but not yet reaped by its parent is gone.
        return self.owner_pid is None or child.pid_alive(self.owner_pid)

    def serve(self) -> None:
        while self.running and self.owner_alive():
            conn = self._accept()
            if conn is None:
                continue
            if self.owner_pid is not None:
                # A world launched for one client serves only that client: stop listening, which
                # also removes the socket file, so nobody else can even knock.
                self.listener.close()
            try:
                self._session(conn)
            except (EOFError, ConnectionResetError, BrokenPipeError):
                pass  # the client went away; wait for the next one
            finally:
                conn.close()
            if self.owner_pid is not None:
                break  # a world launched for one client ends with that client

    def _accept(self) -> Connection | None:
        try:
            # Bounded, so Ctrl+C and an owner's death are seen within ACCEPT_WAIT_S (ipc.ClientListener)
            return self.listener.accept_within(ACCEPT_WAIT_S)
        except ipc.AuthenticationError:
            print("rejected a client that failed authentication", file=sys.stderr, flush=True)
            return None

    def _session(self, conn: Connection) -> None:
        if self.mode == "lockstep":
            while self.running:
                while not conn.poll(0.5):
                    if not self.owner_alive():
                        self.running = False
                        return
                header, payloads = ipc.receive_message(conn)
                self._answer(conn, {**header, "_payloads": payloads})
        else:
            self._realtime(conn)

    def _realtime(self, conn: Connection) -> None:
        period = 1.0 / self.world.spec.tick_hz
        deadline = time.perf_counter()
        checked_owner = deadline
        while self.running:
            while conn.poll(0):
                header, payloads = ipc.receive_message(conn)
                self._answer(conn, {**header, "_payloads": payloads})
            pad = self.pending.pad if self.pending is not None else self.live_pad
            self.world.tick(pad)
            frame_no = self.world.publish()
            if self.pending is not None:
                self.pending.ticks_left -= 1
                if self.pending.ticks_left <= 0:
                    self.pending = None
                    ipc.send_message(conn, self._frame_reply(frame_no))
            deadline += period
            now = time.perf_counter()
            if now - checked_owner > 0.5:
                checked_owner = now
                if not self.owner_alive():
                    self.running = False
            if deadline > now:
                time.sleep(deadline - now)
            else:
                deadline = now  # running late: drop the backlog rather than racing to catch up

    def close(self) -> None:
        self.listener.close()
        self.world.close()


_SAVE_MAGIC = b"PGSAVE1\n"
ACCEPT_WAIT_S = 0.5
EXIT_GRACE_S = 10.0


def seal_state(world_name: str, state: GameState) -> bytes:
    """An opaque save state, like an emulator's: the harness stores it, never reads it."""
    body = json.dumps({"world": world_name, "state": state.to_dict()}, sort_keys=True).encode()
    return _SAVE_MAGIC + zlib.compress(body, 6)


def unseal_state(world_name: str, blob: bytes) -> GameState:
    if not blob.startswith(_SAVE_MAGIC):
        raise RequestError("BadSnapshot", "this is not a save state of the built-in world")
    try:
        data = json.loads(zlib.decompress(blob[len(_SAVE_MAGIC):]))
        state = GameState.from_dict(data["state"])
    except (zlib.error, ValueError, KeyError, TypeError) as exc:
        raise RequestError("BadSnapshot", f"the save state is damaged: {exc}") from None
    if data.get("world") != world_name:
        raise RequestError("BadSnapshot", f"the save state belongs to world {data.get('world')!r}, not {world_name!r}")
    return state


def _finite(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _angle_list(value: object) -> TypeGuard[list[float]]:
    """A list of at most 8 finite numbers."""
    if not isinstance(value, list):
        return False
    items = cast("list[object]", value)
    return all(_finite(o) for o in items) and len(items) <= 8


def _pad(data: object) -> PadState:
    if not isinstance(data, dict):
        raise InvalidPadError("the request needs a 'pad' object")
    return PadState.from_dict(cast("dict[str, Any]", data))


def _start(header: dict[str, Any]) -> str | StartState:
    """A reset names a start state of the world file (`start`) or gives one inline (`start_spec`)."""
    name, spec = header.get("start"), header.get("start_spec")
    if (name is None) == (spec is None):
        raise RequestError("BadStartState", "reset needs either 'start' (a start state name) or 'start_spec' "
                                            "(a mapping {pos, facing, camera_yaw, camera_pitch, flags}), not both")
    if name is not None:
        if not isinstance(name, str):
            raise RequestError("UnknownStartState", "reset 'start' must be a start state name")
        return name
    try:
        return StartState.model_validate(spec)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'start_spec'}: {e['msg']}"
                             for e in exc.errors()[:6])
        raise RequestError("BadStartState", f"reset 'start_spec' is not a valid start state: {problems}") from None


def _ticks(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_HOLD_TICKS:
        raise RequestError("BadRequest", f"ticks must be an integer from 1 to {MAX_HOLD_TICKS}, got {value!r}")
    return value


def _sound_line(world: World) -> str:
    if world.sound is None:
        return "sound off"
    kernel = world.sound.mixer.kernel.name
    return "sound on" if kernel == "compiled" else (
        "sound on, mixed by numpy: no compiled mixer, reinstall with a C compiler for a faster step")


def _exit_when_owner_dies(server: WorldServer, runtime_dir: Path) -> None:
    """A world launched for a client must never outlive it, even while blocked in accept()."""

    def watch() -> None:
        while server.owner_alive():
            time.sleep(0.5)
        _remove_orphaned(runtime_dir)
        os._exit(0)

    threading.Thread(target=watch, name="owner-watchdog", daemon=True).start()


def _remove_orphaned(runtime_dir: Path) -> None:
    """The owner made `runtime_dir` and removes it when it closes the world; once the owner is dead that
    falls to us, or the frame ring (two frames' worth of RAM in /dev/shm) stays until reboot."""
    shutil.rmtree(runtime_dir, ignore_errors=True)


def run(spec: WorldSpec, *, runtime_dir: Path | None, owner_pid: int | None, width: int, height: int,
        mode: str, renderer: RendererChoice, audio: bool = True) -> NoReturn:
    standalone = runtime_dir is None
    if runtime_dir is None:
        runtime_dir = ipc.private_runtime_dir("pokegym-world-")
        endpoint = ipc.new_endpoint(runtime_dir)
    else:
        endpoint = ipc.Endpoint.from_json(json.loads((runtime_dir / "endpoint.json").read_text()))
    world = World(spec, runtime_dir / "frames.bin", width, height, renderer, audio)
    server = WorldServer(world, endpoint, mode, owner_pid)
    if standalone:
        connection_file = runtime_dir / "connection.json"
        fd = os.open(connection_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            json.dump({"endpoint": endpoint.to_json(), "pid": os.getpid()}, handle)
        print(f"{spec.name} is running (pid {os.getpid()}, {mode}, {width}x{height}, "
              f"{world.renderer.display_module}, {_sound_line(world)}).", flush=True)
        print(f"Attach with: {connection_file}", flush=True)
    if owner_pid is not None:
        _exit_when_owner_dies(server, runtime_dir)
    print("READY " + json.dumps({"pid": os.getpid()}), flush=True)
    try:
        # Inside the try: a Ctrl+C sent as soon as READY was read is taken here, and the world still releases
        take_in_this_thread()  # Ctrl+C reaches the thread that waits in accept() (core/world/stop_signals.py)
        server.serve()
    except KeyboardInterrupt:
        pass
    finally:
        defer_in_this_thread()  # a second Ctrl+C waits for the release (the watchdog's thread inherits it)
        _end_if_release_stalls(runtime_dir if standalone or owner_pid is not None else None)
        server.close()
        if standalone:
            for leftover in runtime_dir.iterdir():
                leftover.unlink(missing_ok=True)
            runtime_dir.rmdir()
        elif owner_pid is not None:
            # Whether the owner closed us or died: a world launched for one client ends with it, so its folder
            # has no further use (the owner's own removal ignores a folder already gone). Asking whether the
            # owner is alive raced its death: a killed owner's socket closes before it becomes a zombie.
            _remove_orphaned(runtime_dir)
    # Everything is released. Interpreter teardown (Panda3D's, its threads') has nothing left to do but can
    # stall, and once it begins no daemon thread (the watchdog) runs again: end here.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _end_if_release_stalls(folder: Path | None) -> None:
    """From here the process must end, whatever stalls: a world asked to stop that lingers holds its memory and
    pid (one outlived a SIGINT by a minute in CI). If the release takes longer than EXIT_GRACE_S, the watchdog
    says so, removes the folder the release would have removed (None: the owner removes it), and ends the
    process with status 1; the alarm, whose default action ends the process in the kernel, covers C code that
    never lets go of the GIL."""

    def give_up() -> None:
        print(f"error: the world's release stalled for {EXIT_GRACE_S:.0f} s; ended without finishing it",
              file=sys.stderr, flush=True)
        if folder is not None:
            _remove_orphaned(folder)
        os._exit(1)

    watchdog = threading.Timer(EXIT_GRACE_S, give_up)
    watchdog.daemon = True
    watchdog.start()
    if hasattr(signal, "alarm"):  # POSIX
        signal.alarm(int(2 * EXIT_GRACE_S))

