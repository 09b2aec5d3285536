"""Capturing an external game's sound into an audio ring, keyed by the same ticks as its frames.

`parec` (PulseAudio's recorder; PipeWire's pulse server answers it too) records a source, here the monitor
of the sink the game plays into, as raw s16le, in blocks of about `latency_ms`. A thread cuts that stream
into ticks of rate / fps samples and publishes them in an AudioRing (docs/audio-ring.md), the same ring the
built-in world writes, so readers cannot tell the two apart.

Ticks: a real-time game has no tick we can see, so a frame's tick is its capture time in periods of 1/fps
(core/game/external/capture_loop.py). A tick of sound is given the same clock: the time its last sample was
played, which is when it arrived less what the recorder still buffered. The sink's clock and ours run at
the same rate (both are the system clock), so ticks follow one another; should they drift apart by more
than two ticks (the recorder stalled, the machine was suspended), the gap is filled with silence or the
surplus dropped, and counted.
"""

from __future__ import annotations

import logging
import os
import select
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.game.audio_ring import AudioFormat, AudioRing, AudioUnavailableError
from core.game.errors import GameStartError
from core.game.external.processes import end_process_group

log = logging.getLogger(__name__)

RING_SECONDS = 30.0       # how far back a step's sound can still be read (the built-in world keeps 30 s too)
RESYNC_TICKS = 2          # drift, in ticks, between the sound's clock and ours before we realign
START_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class CaptureCounts:
    ticks: int            # ticks published
    silent_filled: int    # ticks the recorder never delivered (filled with silence)
    dropped: int          # ticks delivered early beyond the drift allowed, or before the game's first frame


def recorder_command(source: str, rate: int, channels: int, latency_ms: int) -> list[str]:
    if sys.platform == "win32":  # WASAPI loopback of the default output: the system's mix (wasapi_recorder.py)
        return [sys.executable, "-m", "core.game.external.wasapi_recorder", "--rate", str(rate), "--channels",
                str(channels), "--block-ms", str(latency_ms)]
    binary = shutil.which("parec")
    if binary is None:
        raise GameStartError("capturing a game's sound needs `parec` (Debian/Ubuntu: apt-get install "
                             "pulseaudio-utils)")
    return [binary, "-d", source, "--format=s16le", f"--rate={rate}", f"--channels={channels}",
            f"--latency-msec={latency_ms}", "--raw"]


class AudioCapture:
    """One recorder process and the thread that feeds the ring; `use_clock` follows each new game process."""

    def __init__(self, ring: AudioRing, command: list[str], env: dict[str, str], latency_s: float) -> None:
        self.ring = ring
        self.format = ring.format
        self._latency_s = latency_s
        self._clock: Callable[[float], int] | None = None
        self._clock_lock = threading.Lock()
        self._resync = False
        self._next_tick = 0
        self._counts = [0, 0, 0]
        self._arrived = threading.Condition()
        self.problem: str | None = None  # why the capture stopped, once it has
        self._stopping = False
        try:
            self._process = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                             stderr=subprocess.PIPE, start_new_session=True)
        except OSError as exc:
            raise GameStartError(f"could not start the sound recorder {command[0]}: {exc}") from None
        self._thread = threading.Thread(target=self._run, name="audio-capture", daemon=True)
        self._thread.start()

    @classmethod
    def start(cls, runtime_dir: Path, source: str, env: dict[str, str], rate: int, channels: int, fps: float,
              latency_ms: int) -> AudioCapture:
        per_tick = rate / fps
        if abs(per_tick - round(per_tick)) > 1e-9:
            raise GameStartError(f"the sound's rate ({rate} Hz) must be a whole number of samples per frame at "
                                 f"{fps:g} frames/s; choose a rate that {fps:g} divides (48000 or 44100 at 30)")
        fmt = AudioFormat(rate, channels, round(per_tick))
        ring = AudioRing.create(runtime_dir / "audio.ring", fmt, max(2, int(RING_SECONDS * fps)))
        try:
            return cls(ring, recorder_command(source, rate, channels, latency_ms), env, latency_ms / 1000.0)
        except BaseException:
            ring.close()
            raise

    @property
    def pid(self) -> int:
        return self._process.pid

    def use_clock(self, tick_at: Callable[[float], int]) -> None:
        """Key the sound from now on by this tick clock (a new game process's frames): a new epoch."""
        with self._clock_lock:
            self._clock = tick_at
            self._resync = True

    def counts(self) -> CaptureCounts:
        return CaptureCounts(*self._counts)

    def wait_for_tick(self, tick: int, timeout: float) -> bool:
        """Wait until the ring holds `tick` (the recorder runs a little behind the game); False if it did not."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while True:
                held = self.ring.ticks_held()
                if held is not None and held[1] >= tick:
                    return True
                left = deadline - time.monotonic()
                if left <= 0 or self.problem is not None:
                    return False
                self._arrived.wait(left)

    def read(self, first_tick: int, last_tick: int, timeout: float = 0.5) -> np.ndarray:
        if not self.wait_for_tick(last_tick, timeout) and self.problem is not None:
            raise AudioUnavailableError(f"the game's sound is not being captured: {self.problem}")
        return self.ring.read(first_tick, last_tick)

    # -- the thread ------------------------------------------------------------------------------
    def _run(self) -> None:
        stream = self._process.stdout
        assert stream is not None
        fd = stream.fileno()
        frame_bytes = 2 * self.format.channels
        tick_bytes = self.format.samples_per_tick * frame_bytes
        pending = bytearray()
        try:
            while not self._stopping:
                # Windows' select takes sockets only: there the read blocks, and close() ends the recorder (EOF).
                if sys.platform != "win32" and not select.select([fd], [], [], 0.5)[0]:
                    continue
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                arrived = time.monotonic()
                pending += chunk
                whole = len(pending) // tick_bytes
                if whole:
                    block = bytes(pending[:whole * tick_bytes])
                    del pending[:whole * tick_bytes]
                    # The last of these samples was played when the chunk arrived, less what is still pending
                    # and what the recorder buffers.
                    ended = arrived - len(pending) / frame_bytes / self.format.rate - self._latency_s
                    self._publish(np.frombuffer(block, np.int16).reshape(-1, self.format.channels), ended)
        except OSError as exc:
            self.problem = f"reading the recorder failed: {exc}"
        except Exception as exc:  # a defect of ours: said (the game goes on silent), never a thread dying unheard
            log.exception("the sound capture stopped")
            self.problem = f"the sound capture stopped ({type(exc).__name__}: {exc}; the log has its traceback)"
        finally:
            if not self._stopping and self.problem is None:
                err = self._process.stderr.read().decode(errors="replace").strip() if self._process.stderr else ""
                self.problem = f"the sound recorder exited ({err[-300:] or 'no message'})"
            with self._arrived:
                self._arrived.notify_all()

    def _publish(self, pcm: np.ndarray, ended: float) -> None:
        with self._clock_lock:
            clock, resync = self._clock, self._resync
        if clock is None:
            return  # no game process yet: nothing to key the sound by
        per_tick = self.format.samples_per_tick
        ticks = len(pcm) // per_tick
        first_due = clock(ended) - ticks + 1  # the tick the first of these samples belongs to, by our clock
        if first_due < 0:
            # Played before this game process's first frame (a block read just after a restart): no tick of its
            # own to key it by. Dropped; the new epoch begins with the first sound of the process.
            early = min(ticks, -first_due)
            self._counts[2] += early
            pcm, ticks, first_due = pcm[early * per_tick:], ticks - early, first_due + early
            if ticks <= 0:
                return
        with self._clock_lock:
            if self._clock is clock:  # (a newer process's clock keeps its own resync pending)
                self._resync = False
        if resync:
            self.ring.begin_epoch()
            self._next_tick = first_due
        elif first_due > self._next_tick + RESYNC_TICKS:  # the recorder fell behind: the missing ticks are silence
            gap = first_due - self._next_tick
            self.ring.write(self._next_tick, np.zeros((gap * per_tick, self.format.channels), np.int16))
            self._counts[1] += gap
            self._next_tick = first_due
        elif first_due < self._next_tick - RESYNC_TICKS:  # ahead of our clock: drop the surplus
            surplus = min(ticks, self._next_tick - first_due)
            self._counts[2] += surplus
            pcm, ticks = pcm[surplus * per_tick:], ticks - surplus
        if ticks <= 0:
            return
        self.ring.write(self._next_tick, np.ascontiguousarray(pcm))
        self._next_tick += ticks
        self._counts[0] += ticks
        with self._arrived:
            self._arrived.notify_all()

    def close(self) -> None:
        self._stopping = True
        end_process_group(self._process, 1.0)
        self._thread.join(timeout=2.0)
        for pipe in (self._process.stdout, self._process.stderr):
            if pipe is not None:
                pipe.close()
        self.ring.close()
