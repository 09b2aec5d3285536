"""Replay docs/new-game.md on this machine and time each step: Red Eclipse from install to a judged episode.

    python tools/redeclipse_walkthrough.py                      # into a fresh folder under /tmp
    python tools/redeclipse_walkthrough.py --into ~/games/redeclipse --install   # apt-get install it first (root)

It runs only the project's own commands (`python main.py ...`), as a user following the walkthrough would,
starting from a copy of assets/backends/redeclipse/ with `memory_profile: none` (the state the walkthrough
starts the memory part in), and prints the wall time of each step and the total. It is not a CI test: the
game is an 864 MB download (docs/new-game.md says why CI does not fetch it). Exit status: the first step that
failed, or 0.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "assets" / "backends" / "redeclipse"


@dataclass
class Step:
    name: str
    seconds: float
    ok: bool
    tail: str


def run(name: str, command: list[str], steps: list[Step], timeout_s: float) -> bool:
    """Run one step, echo it, keep its wall time and the last lines of its output."""
    print(f"\n$ {' '.join(command)}", flush=True)
    started = time.monotonic()
    try:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout_s, check=False)
        # progress goes to stderr, results to stdout: results last, so the tail shows them
        ok, output = done.returncode == 0, done.stderr + done.stdout
    except subprocess.TimeoutExpired as exc:
        ok, output = False, f"timed out after {timeout_s:.0f} s\n{exc.stdout or ''}{exc.stderr or ''}"
    seconds = time.monotonic() - started
    # the readiness lines repeat every 5 s; the rest is what the user reads
    lines = [line for line in output.splitlines() if "still waiting" not in line]
    tail = "\n".join(lines[-12:])
    print(tail, flush=True)
    print(f"[{name}: {'ok' if ok else 'FAILED'} in {seconds:.0f} s]", flush=True)
    steps.append(Step(name, seconds, ok, tail))
    return ok


def set_profile(backend: Path, profile: str) -> None:
    text = backend.read_text()
    backend.write_text(re.sub(r"(?m)^memory_profile: .*$", f"memory_profile: {profile}", text, count=1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--into", type=Path, help="the user's folder to copy the example into (default: a temp one)")
    parser.add_argument("--install", action="store_true", help="apt-get install -y redeclipse first (needs root)")
    parser.add_argument("--trials", type=int, default=1, help="random-agent episodes to record (default 1)")
    args = parser.parse_args()

    python = sys.executable
    steps: list[Step] = []
    if args.install and not run("install", ["apt-get", "install", "-y", "redeclipse"], steps, 1800):
        return 1
    if not Path("/usr/lib/games/redeclipse/redeclipse").exists():
        print("Red Eclipse is not installed: apt-get install -y redeclipse (Debian), or --install", file=sys.stderr)
        return 1
    folder = (args.into or Path(tempfile.mkdtemp(prefix="redeclipse-walkthrough-"))).expanduser()
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copytree(EXAMPLE, folder, dirs_exist_ok=True)
    backend = folder / "redeclipse.yaml"
    profile = folder / "found_profile.yaml"
    runs = folder / "runs" / f"random-{int(time.time())}"
    print(f"working in {folder}")
    set_profile(backend, "none")
    ok = (run("record-start", [python, "main.py", "backend", "record-start", str(backend), "spawn",
                               "--image", str(folder / "walkthrough_start.png")], steps, 600)
          and run("free play", [python, "main.py", "run", "--backend", str(backend), "--agent", "random", "--steps",
                                "15", "--trials", "1", "--out", str(folder / "runs" / "free")], steps, 900)
          and run("find-position", [python, "main.py", "memory", "find-position", "--backend", str(backend)],
                  steps, 900)
          and run("signature", [python, "main.py", "memory", "signature", "--backend", str(backend), "--out",
                                str(profile), "--game-version", "1.6.0", "--units", "units"], steps, 3600))
    if not ok:
        return report(steps)
    ok = run("verify", [python, "main.py", "memory", "verify", "--profile", str(profile), "--backend", str(backend)],
             steps, 900)
    if ok:
        set_profile(backend, profile.name)
        ok = (run("tasks validate", [python, "main.py", "tasks", "validate", "--tasks", str(folder / "tasks"),
                                     "--drive"], steps, 900)
              and run("run (random)", [python, "main.py", "run", "--backend", str(backend), "--agent", "random",
                                       "--trials", str(args.trials), "--out", str(runs)], steps, 1800)
              and run("report", [python, "main.py", "report", str(runs)], steps, 300))
    return report(steps)


def report(steps: list[Step]) -> int:
    print("\n| step | wall time | result |\n|---|---|---|")
    for step in steps:
        print(f"| {step.name} | {step.seconds:.0f} s | {'ok' if step.ok else 'FAILED'} |")
    print(f"| total | {sum(s.seconds for s in steps):.0f} s | |")
    print(f"(machine load at the end: {os.getloadavg()[0]:.1f}; timings on a shared machine are noisy)")
    failed = [i for i, s in enumerate(steps, 1) if not s.ok]
    return failed[0] if failed else 0


if __name__ == "__main__":
    sys.exit(main())
