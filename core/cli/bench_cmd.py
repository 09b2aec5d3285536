"""`python main.py bench world`: measure the built-in world. Figures are relative to baselines
measured in the same run, because shared machines are noisy.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from core.paths import PROJECT_ROOT


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("suite", choices=["world"], help="what to measure")
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.add_argument("--steps", type=int, default=200, help="lockstep steps to time (default %(default)s)")
    parser.add_argument("--frames", type=int, default=400, help="frames to render per size (default %(default)s)")


def _emit(args: argparse.Namespace, name: str, value: float, unit: str, baseline: float | None = None,
          baseline_name: str | None = None, ratio: float | None = None) -> None:
    record: dict[str, Any] = {"bench": args.suite, "name": name, "value": round(value, 3), "unit": unit}
    if baseline is not None:
        record["baseline"] = round(baseline, 3)
        record["baseline_name"] = baseline_name
        record["ratio"] = round(ratio if ratio is not None else value / baseline, 3)
    if args.json:
        print(json.dumps(record), flush=True)
    else:
        extra = f"   ({record['ratio']}x {baseline_name} = {record['baseline']})" if baseline is not None else ""
        print(f"{name:28s} {record['value']:>10} {unit}{extra}", flush=True)


def _probe(width: int, height: int, frames: int, steps: int = 0) -> dict[str, float]:
    command = [sys.executable, "-m", "core.world.bench_probe", "--width", str(width), "--height", str(height),
               "--frames", str(frames), "--steps", str(steps)]
    output = subprocess.run(command, cwd=PROJECT_ROOT, capture_output=True, text=True, check=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def bench_world(args: argparse.Namespace) -> None:
    from core.game.builtin import BuiltinWorld
    from core.world.bench_probe import step_sequence

    for width, height in ((640, 360), (1280, 720)):
        frames = args.frames if width == 640 else max(50, args.frames // 3)
        probe = _probe(width, height, frames, steps=args.steps if width == 640 else 0)
        _emit(args, f"render_fps_{width}x{height}", probe["render_fps"], "frames/s", probe["bare_fps"],
              "bare_render_fps")
        if width == 640:
            in_process_step = probe["step_s"]
    with BuiltinWorld.launch(renderer="software") as world:
        world.reset("south_gate")
        pads = step_sequence(args.steps)
        for pad in pads[:10]:
            world.hold_ticks(pad, 15)
        world.reset("south_gate")
        started = time.perf_counter()
        for pad in pads:
            world.hold_ticks(pad, 15)  # 0.5 s of game time at 30 Hz
            world.latest_frame()
        per_step = (time.perf_counter() - started) / len(pads)
        rss = _peak_rss_mb(world.pid)
    _emit(args, "lockstep_steps_per_s", 1.0 / per_step, "steps/s", 1.0 / in_process_step,
          "in_process_steps_per_s")
    _emit(args, "step_overhead_ratio", per_step / in_process_step, "ratio", in_process_step * 1000,
          "in_process_step_ms", ratio=per_step / in_process_step)
    _emit(args, "peak_rss_mb", rss, "MiB")


def run(args: argparse.Namespace) -> int:
    if args.suite == "world":
        bench_world(args)
    return 0
