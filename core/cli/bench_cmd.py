"""`python main.py bench world|scan|memory|record|live|replay|parse|external|rl|run`: the world, memory scanning,
value scans, recording, the studio, the reply parser, an external game (Minetest: capture and input),
Gymnasium environments, or whole runs (local pool and Ray).

Figures are relative to baselines measured in the same run, because shared machines are noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from core.game.pad import PadState
from core.paths import PROJECT_ROOT


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("suite", choices=["world", "scan", "memory", "record", "live", "replay", "parse", "external",
                                          "rl", "run", "hearing"],
                        help="what to measure")
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.add_argument("--steps", type=int, default=60, help="lockstep steps per timed block (default %(default)s)")
    parser.add_argument("--frames", type=int, default=400, help="frames to render per size (default %(default)s)")
    parser.add_argument("--scan-mib", type=int, default=1024, help="memory the scan target holds (default 1 GiB)")
    parser.add_argument("--bound-gib", type=int, default=4,
                        help="memory: the big target for the peak-RSS check, GiB (default 4; 0 skips it)")
    parser.add_argument("--seek-steps", type=int, default=10_000, help="steps in the seek-test file (record)")
    parser.add_argument("--live-seconds", type=float, default=15.0, help="how long `live` measures (default 15)")
    parser.add_argument("--tmp", type=Path, help="where record's temporary files go (default: system temp)")
    parser.add_argument("--corpus", type=Path,
                        help="parse: a folder of reply corpus YAML files (default: tests/data/replies)")
    parser.add_argument("--rounds", type=int, default=30, help="parse: timed passes over the corpus (default 30)")
    parser.add_argument("--episodes", type=int, default=6, help="run: episodes per configuration (default 6)")
    parser.add_argument("--episode-steps", type=int,
                        help="run: steps per episode (default 30; with --model-latency, by width: 20 more than the "
                             "width's start-ups take, taking turns on the CPUs, so that all its episodes step at once)")
    parser.add_argument("--model-latency", type=float, metavar="S",
                        help="run: model-bound instead: episodes against a loopback OpenAI-compatible server that "
                             "answers after S seconds, at each of --workers (core/cli/bench_model.py)")
    parser.add_argument("--workers", default="1,8,32,64", metavar="N,N,...",
                        help="run --model-latency: the worker counts to measure (default %(default)s)")
    parser.add_argument("--jitter", type=float, default=0.0, metavar="S",
                        help="run --model-latency: each reply's latency varies by up to ±S seconds")
    parser.add_argument("--rate-429", type=float, default=0.0, metavar="P",
                        help="run --model-latency: answer a request with 429 (too many requests) with probability P")
    parser.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS",
                        help="run --model-latency: the episodes on Ray (a private local one, or auto / HOST:PORT) "
                             "instead of the local pool")
    parser.add_argument("--cpus-per-episode", type=float, metavar="N",
                        help="run --model-latency --ray: CPUs each episode asks Ray for (default: the cluster's "
                             "CPUs over the widest width, so every width fits at once)")


def emit(args: argparse.Namespace, name: str, value: float, unit: str, baseline: float | None = None,
          baseline_name: str | None = None, ratio: float | None = None) -> None:
    record: dict[str, Any] = {"bench": args.suite, "name": name, "value": round(value, 3), "unit": unit}
    if baseline is not None:
        record["baseline"] = round(baseline, 3)
        record["baseline_name"] = baseline_name
        record["ratio"] = round(ratio if ratio is not None else value / baseline, 3)
    # A bench whose libraries print to standard output (Ray's raylet warnings) points it elsewhere and keeps its
    # own figures here, so `--json` output stays one record per line.
    out = getattr(args, "figures_to", None) or sys.stdout
    if args.json:
        print(json.dumps(record), file=out, flush=True)
    else:
        extra = f"   ({record['ratio']}x {baseline_name} = {record['baseline']})" if baseline is not None else ""
        print(f"{name:28s} {record['value']:>10} {unit}{extra}", file=out, flush=True)


def _probe(width: int, height: int, frames: int) -> dict[str, float]:
    command = [sys.executable, "-m", "core.world.bench_probe", "--width", str(width), "--height", str(height),
               "--frames", str(frames)]
    output = subprocess.run(command, cwd=PROJECT_ROOT, capture_output=True, text=True, check=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def step_sequence(count: int) -> list[PadState]:
    """The bench's step inputs: walk, turning the camera a little, in a fixed pattern.

    Built here rather than in the world package: only the world process imports core.world.
    """
    pads: list[PadState] = []
    for i in range(count):
        angle = (i % 8) / 8.0
        pads.append(PadState(left_x=angle - 0.5, left_y=1.0, right_x=0.3 if i % 3 else -0.3))
    return pads


def bench_world(args: argparse.Namespace) -> None:
    from core.game.builtin import BuiltinWorld

    for width, height in ((640, 360), (1280, 720)):
        frames = args.frames if width == 640 else max(50, args.frames // 3)
        probe = _probe(width, height, frames)
        emit(args, f"render_fps_{width}x{height}", probe["render_fps"], "frames/s", probe["bare_fps"],
              "bare_render_fps")
    with BuiltinWorld.launch(renderer="software") as world:
        pads = step_sequence(args.steps)
        world.reset("south_gate")
        for pad in pads[:10]:
            world.hold_ticks(pad, 15)
        through, inside = 0.0, 0.0
        for _ in range(4):  # interleaved blocks, so both sides see the same machine load
            world.reset("south_gate")
            started = time.perf_counter()
            for pad in pads:
                world.hold_ticks(pad, 15)  # 0.5 s of game time at 30 Hz
                world.latest_frame_view()  # receiving the frame: zero-copy, as the ring allows
            through += time.perf_counter() - started
            world.reset("south_gate")
            inside += world.time_steps([p.to_dict() for p in pads], 15)
        rss = _peak_rss_mb(world.pid)
        if world.audio_info is not None:
            from core.cli.bench_audio import bench_audio

            bench_audio(args, emit, world, pads)
    per_step, in_process_step = through / (4 * len(pads)), inside / (4 * len(pads))
    emit(args, "lockstep_steps_per_s", 1.0 / per_step, "steps/s", 1.0 / in_process_step,
          "in_process_steps_per_s")
    emit(args, "step_overhead_ratio", per_step / in_process_step, "ratio", in_process_step * 1000,
          "in_process_step_ms", ratio=per_step / in_process_step)
    emit(args, "peak_rss_mb", rss, "MiB")


def run(args: argparse.Namespace) -> int:
    if args.suite == "world":
        bench_world(args)
    elif args.suite == "scan":
        bench_scan(args)
    elif args.suite == "memory":
        from core.cli.bench_memory import bench_memory

        bench_memory(args, emit)
    elif args.suite in ("live", "replay"):
        # core never imports the studio; main.py routes these to studio.bench_live / studio.bench_replay.
        raise SystemExit(f"bench {args.suite} runs the studio: call it as `python main.py bench {args.suite}`")
    elif args.suite == "record":
        from core.cli.bench_record import bench_record

        bench_record(args, emit)
    elif args.suite == "parse":
        from core.cli.bench_parse import bench_parse

        bench_parse(args, emit)
    elif args.suite == "external":
        from core.cli.bench_external import bench_external

        bench_external(args, emit)
    elif args.suite == "hearing":
        from core.cli.bench_hearing import bench_hearing

        bench_hearing(args, emit)
    elif args.suite == "rl":
        from core.cli.bench_rl import bench_rl

        bench_rl(args, emit)
    elif args.suite == "run" and args.model_latency is not None:
        from core.cli.bench_model import bench_model

        bench_model(args, emit)
    elif args.suite == "run":
        from core.cli.bench_run import bench_run

        args.episode_steps = args.episode_steps or 30
        bench_run(args, emit)
    return 0


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench_scan(args: argparse.Namespace) -> None:
    import re

    from core.evaluation.client import EvaluatorClient
    from core.game.builtin import BuiltinWorld
    from core.memory.pattern import parse_pattern
    from core.memory.readers import LinuxReader
    from core.memory.scanner import DEFAULT_CHUNK, Match, RegionFilter, ScanStats, find_all, scan

    size = args.scan_mib << 20
    target = subprocess.Popen([sys.executable, "-m", "core.memory.bench_target", "--mode", "anon", "--size",
                               str(size), "--fill", "--count", "16"], cwd=PROJECT_ROOT, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert target.stdin is not None and target.stdout is not None  # both are pipes
    try:
        info = json.loads(target.stdout.readline())
        reader = LinuxReader(info["pid"])
        regions = [r for r in reader.regions() if RegionFilter(perms="rw", min_size=size).accepts(r)]
        buffer = bytearray(DEFAULT_CHUNK)

        def plain_read() -> float:
            started = time.perf_counter()
            for region in regions:
                for address in range(region.start, region.end, DEFAULT_CHUNK):
                    reader.read_into(address, memoryview(buffer)[:min(DEFAULT_CHUNK, region.end - address)])
            return time.perf_counter() - started

        pattern = parse_pattern("50 4B 47 59 4D 5A A5 01")
        read_s = min(plain_read() for _ in range(3))
        scan_times: list[float] = []
        found: list[Match] = []
        for _ in range(3):
            stats = ScanStats()
            found = scan(reader, pattern, regions=regions, stats=stats)
            scan_times.append(stats.seconds)
        scan_s = min(scan_times)
        assert len(found) == 2 + 16 + 3, f"the scan found {len(found)} of the 21 planted signatures"
        gib = sum(r.size for r in regions) / (1 << 30)
        emit(args, "read_gib_per_s", gib / read_s, "GiB/s")
        emit(args, "scan_gib_per_s", gib / scan_s, "GiB/s", gib / read_s, "read_gib_per_s")
        emit(args, "scan_over_read_ratio", scan_s / read_s, "ratio", read_s, "read_s", ratio=scan_s / read_s)
        # The naive alternative: one regex with the leading wildcards compiled in, on 128 MiB.
        sample = bytearray(min(size, 128 << 20))
        reader.read_into(regions[0].start, sample)
        wildcard = parse_pattern("?? ?? 47 59 4D 5A A5 01")
        naive = re.compile(b"(?s)..GYMZ\xa5\x01")
        started = time.perf_counter()
        naive_hits = [m.start() for m in naive.finditer(sample)]
        naive_s = time.perf_counter() - started
        started = time.perf_counter()
        ours = find_all(wildcard, sample)
        ours_s = time.perf_counter() - started
        assert ours == naive_hits
        per_gib = (1 << 30) / len(sample)
        emit(args, "regex_leading_wildcards_gib_per_s", 1 / (naive_s * per_gib), "GiB/s",
              1 / (ours_s * per_gib), "anchored_search_gib_per_s")
        reader.close()
    finally:
        target.stdin.close()
        target.wait(timeout=30)
    with BuiltinWorld.launch(renderer="software") as world, EvaluatorClient.launch(world.pid) as evaluator:
        evaluator.wait_locked()
        world.reset("plaza")
        first = len(evaluator.samples)
        cpu_before, wall_before = _cpu_seconds(evaluator.pid), time.perf_counter()
        evaluator.wait_until(lambda: len(evaluator.samples) >= first + 180, timeout=30, what="180 samples")
        cpu_after, wall_after = _cpu_seconds(evaluator.pid), time.perf_counter()
        window = evaluator.samples[first:first + 181]
        hz = (len(window) - 1) / (window[-1].time - window[0].time)
        emit(args, "sample_hz", hz, "samples/s")
        emit(args, "sampler_cpu_percent", 100 * (cpu_after - cpu_before) / (wall_after - wall_before), "%")
