"""`python main.py bench external`: capture and input on a real external game (Minetest under our Xvfb).

Every figure comes with a baseline measured in the same run:
* capture_fps_WxH / capture_ms_p95_WxH: our whole capture step (grab, BGRA->RGB, scale, write into the
  frame ring) against a bare mss grab of the same window;
* frame_age_ms_p95: from the start of a grab to the frame being readable in the ring, at the game's rate,
  against the capture period;
* capture_cpu_percent: our process's CPU while it captures at the game's rate, against the game's own CPU;
* input_latency_ms_p95: XTEST pointer motion (a camera turn) to the first captured frame that shows it,
  against the game's own frame interval.
* audio_capture_latency_ms_p95: a click that makes the game play a sound (digging the ground) to the first
  loud samples readable from the audio ring, against input_latency_ms_p95 (the same input, seen in frames);
* audio_pipeline_latency_ms_p95: a click played straight into the game's private sink to its first samples in
  the ring: our share of the above (the rest is the game's own: its frame, its logic, its sound library);
* audio_capture_cpu_percent: the sound server and recorder (parec) together, against the game's own CPU.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from core.game.pad import PadState

Emit = Callable[..., None]
CHANGED = 2.0  # mean absolute pixel difference that counts as a changed picture


def _p95(values: list[float]) -> float:
    return float(np.percentile(values, 95)) if values else float("nan")


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _launch(width: int, height: int) -> Any:
    from core.backends.profile import load_backend
    from core.evaluation.profile import load_profile
    from core.game.external.game import ExternalGame

    backend = load_backend("minetest")
    assert backend.external is not None
    expect = load_profile(backend.memory_profile_path).game_version
    return ExternalGame.launch(backend.external, backend.name, backend.directory, width=width, height=height,
                               version_expect=expect)


def _capture_throughput(game: Any, frames: int) -> tuple[list[float], list[float]]:
    """Seconds per frame of our capture step, and of a bare mss grab, interleaved in blocks."""
    import mss

    from core.game.external.capture import open_capture
    from core.game.external.capture_loop import fit_to

    spec = game.spec.frames
    ours: list[float] = []
    bare: list[float] = []
    capture = open_capture("mss", game.display, game.window.window_id, spec.window_title, spec.crop)
    ring = game.ring
    sct = (getattr(mss, "MSS", None) or mss.mss)(display=game.display)
    window = game.window
    rect = {"left": window.x, "top": window.y, "width": window.width, "height": window.height}
    try:
        for _ in range(4):
            for _ in range(frames // 4):
                started = time.perf_counter()
                ring.write(fit_to(capture.grab(), ring.width, ring.height), 0)
                ours.append(time.perf_counter() - started)
            for _ in range(frames // 4):
                started = time.perf_counter()
                sct.grab(rect)
                bare.append(time.perf_counter() - started)
    finally:
        sct.close()
        capture.close()
    return ours, bare


def _input_latency(game: Any, trials: int) -> tuple[list[float], list[float]]:
    """Pointer motion to the first changed frame; and the game's picture-change interval while turning."""
    device = game.input.device
    ring, capture = game.ring, game.capture
    latencies: list[float] = []
    for trial in range(trials):
        game.ensure_focus()
        time.sleep(0.3)  # let the picture settle
        before = ring.latest()
        started = time.monotonic()
        device.move_relative(40 if trial % 2 == 0 else -40, 0)
        deadline = started + 2.0
        seen = before.frame_no
        while time.monotonic() < deadline:
            frame_no = capture.wait_frame_after(time.monotonic(), 0.5)
            frame = ring.latest()
            if frame is None or frame_no is None or frame.frame_no == seen:
                continue
            seen = frame.frame_no
            if np.abs(frame.pixels.astype(np.int16) - before.pixels.astype(np.int16)).mean() > CHANGED:
                latencies.append((capture.grab_started(frame.frame_no) or time.monotonic()) - started)
                break
    # The game's own frame interval: turn continuously and time the picture changes.
    intervals: list[float] = []
    game.set_pad(PadState(right_x=0.5))
    try:
        last_change, previous = None, ring.latest()
        end = time.monotonic() + 3.0
        while time.monotonic() < end:
            capture.wait_frame_after(time.monotonic(), 0.5)
            frame = ring.latest()
            if frame is None or frame.frame_no == previous.frame_no:
                continue
            if np.abs(frame.pixels.astype(np.int16) - previous.pixels.astype(np.int16)).mean() > CHANGED:
                now = time.monotonic()
                if last_change is not None:
                    intervals.append(now - last_change)
                last_change = now
            previous = frame
    finally:
        game.set_pad(PadState())
    return latencies, intervals


LOUD = 300  # a sample beyond this (of 32767) is the game's sound, not the silence of an idle sink


def _heard_after(capture: Any, looked: int, started: float, timeout: float = 1.5) -> float | None:
    """Seconds from `started` until loud samples after tick `looked` are readable in the ring; None if none came."""
    while time.monotonic() < started + timeout:
        held = capture.ring.ticks_held()
        if held is None or held[1] <= looked:
            capture.wait_for_tick(looked + 1, 0.2)
            continue
        fresh = capture.ring.read(looked + 1, held[1])
        looked = held[1]
        if np.abs(fresh).max(initial=0) > LOUD:
            return time.monotonic() - started
    return None


def _audio_latency(game: Any, trials: int) -> list[float]:
    """Seconds from a dig click to the first loud samples of it readable in the audio ring."""
    from core.game.pad import Button

    capture = game.sound.capture
    game.hold(PadState(right_y=-1.0), 0.6)  # look at the ground: a click digs it, and digging sounds at once
    latencies: list[float] = []
    for _ in range(trials):
        game.hold(PadState(), 0.8)  # the last sound fades
        newest = game.capture.tick_at(time.monotonic())
        capture.wait_for_tick(newest, 1.0)
        started = time.monotonic()
        game.set_pad(PadState(buttons=frozenset({Button.ZR})))
        try:
            heard = _heard_after(capture, newest, started)
        finally:
            game.set_pad(PadState())
        if heard is not None:
            latencies.append(heard)
    return latencies


def _pipeline_latency(game: Any, trials: int) -> list[float]:
    """The same measure for a click played straight into the game's private sink (pacat): our share of it."""
    import subprocess

    server, capture = game.sound.server, game.sound.capture
    player = subprocess.Popen(["pacat", "--format=s16le", f"--rate={capture.format.rate}",
                               f"--channels={capture.format.channels}", "--latency-msec=10"],
                              stdin=subprocess.PIPE, env={**os.environ, "PULSE_SERVER": server.address})
    assert player.stdin is not None
    click = np.full((capture.format.rate // 20, capture.format.channels), 8000, np.int16).tobytes()
    latencies: list[float] = []
    try:
        for _ in range(trials):
            time.sleep(0.4)
            held = capture.ring.ticks_held()
            looked = held[1] if held else 0
            started = time.monotonic()
            player.stdin.write(click)
            player.stdin.flush()
            heard = _heard_after(capture, looked, started)
            if heard is not None:
                latencies.append(heard)
    finally:
        player.stdin.close()
        player.wait(5)
    return latencies


def _sound_cpu(game: Any, seconds: float) -> tuple[float, float]:
    """CPU of the sound server and recorder together, and of the game, while the game runs (% of a core)."""
    pids = [game.sound.capture.pid] + ([game.sound.server.process.pid] if game.sound.server else [])
    before, game_before, wall = sum(map(_cpu_seconds, pids)), _cpu_seconds(game.pid), time.perf_counter()
    game.hold(PadState(left_y=1.0), seconds)  # walking: footsteps keep the sound going
    wall = time.perf_counter() - wall
    return (100 * (sum(map(_cpu_seconds, pids)) - before) / wall,
            100 * (_cpu_seconds(game.pid) - game_before) / wall)


def bench_external(args: argparse.Namespace, emit: Emit) -> None:
    frames = max(80, args.frames)
    for width, height in ((640, 360), (1280, 720)):
        with _launch(width, height) as game:
            ours, bare = _capture_throughput(game, frames)
            size = f"{width}x{height}"
            emit(args, f"capture_fps_{size}", len(ours) / sum(ours), "frames/s", len(bare) / sum(bare),
                 "bare_mss_fps")
            emit(args, f"capture_ms_p95_{size}", _p95(ours) * 1000, "ms", _p95(bare) * 1000, "bare_mss_ms_p95")
            if width != 640:
                continue
            # At the game's rate, as the harness runs it: frame age and CPU.
            time.sleep(1.0)
            cpu_us, cpu_game, wall = _cpu_seconds(os.getpid()), _cpu_seconds(game.pid), time.perf_counter()
            time.sleep(5.0)
            wall = time.perf_counter() - wall
            ours_cpu = 100 * (_cpu_seconds(os.getpid()) - cpu_us) / wall
            game_cpu = 100 * (_cpu_seconds(game.pid) - cpu_game) / wall
            stats = game.capture_stats()
            period_ms = 1000.0 / game.spec.frames.fps
            emit(args, "frame_age_ms_p95", stats.age_ms_p95, "ms", period_ms, "capture_period_ms")
            emit(args, "capture_rate_fps", stats.fps, "frames/s", game.spec.frames.fps, "configured_fps")
            emit(args, "capture_cpu_percent", ours_cpu, "% of a core", game_cpu, "game_cpu_percent")
            latencies, intervals = _input_latency(game, trials=24)
            emit(args, "input_latency_ms_p95", _p95(latencies) * 1000, "ms",
                 float(np.median(intervals)) * 1000 if intervals else float("nan"), "game_frame_interval_ms")
            emit(args, "input_latency_ms_p50", float(np.median(latencies)) * 1000 if latencies else float("nan"),
                 "ms")
            emit(args, "input_latency_trials_detected", len(latencies), "of 24")
            if game.sound.format is None:
                print(f"audio_capture: not measured, the game has no sound: {game.sound.problem}", file=sys.stderr)
                continue
            heard = _audio_latency(game, trials=20)
            emit(args, "audio_capture_latency_ms_p95", _p95(heard) * 1000, "ms", _p95(latencies) * 1000,
                 "input_latency_ms_p95")
            if game.sound.server is not None:
                ours = _pipeline_latency(game, trials=20)
                emit(args, "audio_pipeline_latency_ms_p95", _p95(ours) * 1000, "ms", _p95(heard) * 1000,
                     "audio_capture_latency_ms_p95")
            emit(args, "audio_capture_trials_detected", len(heard), "of 20")
            sound_cpu, game_cpu = _sound_cpu(game, 4.0)
            emit(args, "audio_capture_cpu_percent", sound_cpu, "% of a core", game_cpu, "game_cpu_percent")
