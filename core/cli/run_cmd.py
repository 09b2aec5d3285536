"""`python main.py run`: run episodes on a backend (the built-in world by default) and record each to HDF5.

    python main.py run --tasks all --granularity all --agent random --trials 5 --workers 2 --out runs/random
    python main.py run --tasks q01*,category:navigation --granularity goal --agent random:7 --out runs/x
    OPENAI_API_KEY=... python main.py run --tasks q03* --agent model:gpt-5.2 --reflection 5 --out runs/gpt
    OPENAI_API_KEY=... python main.py run --protocol paper --agent model:gpt-5.2 --workers 2 --out runs/gpt-paper
    python main.py run --backend minetest --tasks all --agent random --out runs/minetest

Each episode gets its own game and evaluator processes. Ctrl+C stops cleanly: no new episodes start,
running ones stop after their current step and are marked interrupted (not results); Ctrl+C again
aborts at once. Rerun the same command to resume: episodes with a result (results.jsonl) are skipped,
interrupted ones and those that ended in an infrastructure error (errors.jsonl) run again.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
import time
from pathlib import Path
from types import FrameType
from typing import Any

from core.agents.observe import ObservationOptions
from core.backends.profile import BackendFileError, load_backend
from core.game import child
from core.session.batch import BatchError, run_batch
from core.session.batch_control import BatchControl
from core.session.interventions import InterventionPolicy
from core.session.runner import RunOptions


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", default="builtin", metavar="NAME|PATH",
                        help="the game: builtin (default), minetest, ryujinx, or a backend file "
                             "(docs/backend-format.md)")
    parser.add_argument("--protocol", choices=["paper"],
                        help="paper: every task x all 3 granularities x 5 trials with each task's own step budget "
                             "(the benchmark's protocol); leave out --tasks, --granularity, --trials and --budget")
    parser.add_argument("--tasks", default="all", help="all, task ids or globs, quests, category:NAME (comma list)")
    parser.add_argument("--granularity", default="goal", help="visual, step, goal or all (default goal)")
    parser.add_argument("--agent", default="random",
                        help="random[:SEED], replay:EPISODE.h5, or model:PRESET (claude-sonnet-4.6, gpt-5.2, "
                             "gemini-3-pro, provider:model-id); keys come from the environment")
    parser.add_argument("--model-id", help="override the preset's model id")
    parser.add_argument("--base-url", help="an OpenAI-compatible server (vLLM, Ollama, LM Studio) or a proxy")
    parser.add_argument("--reflection", type=int, nargs="?", const=5, default=0, metavar="K",
                        help="self-reflection every K steps (5 if K is omitted; off by default), with a per-model "
                             "experience library")
    parser.add_argument("--experience-from", type=Path, metavar="LIBRARY.json",
                        help="with --reflection: start every episode from this experience library (for example "
                             "RUN/experience/library.json of an earlier run). Without it a run starts with no lessons; "
                             "the start is recorded in RUN/experience/start.json and in every episode file")
    parser.add_argument("--frames-every", type=int, default=0, metavar="TICKS",
                        help="also record continuous frames every TICKS ticks for smooth replay (0 = off)")
    parser.add_argument("--trials", type=int, default=1)
    parser.add_argument("--workers", type=int, default=1, help="episodes at once (each has its own world)")
    parser.add_argument("--out", type=Path, required=True, help="folder for results.jsonl and episodes/")
    parser.add_argument("--paradigm", choices=["discrete", "continuous"], default="discrete")
    parser.add_argument("--previous-frame", action="store_true", help="also show the agent the previous frame")
    parser.add_argument("--side-views", nargs="?", const="default", choices=["default", "turn", "instant"],
                        help="also show the agent left and right views: by turning the camera (turn: costs game "
                             "time, comparable with emulator runs; the backend's default) or instant (built-in "
                             "world only, marked in the results)")
    parser.add_argument("--intervention", choices=["none", "text", "physical"], default="none")
    parser.add_argument("--intervention-k", type=int, default=3, help="consecutive ineffective moves (default 3)")
    parser.add_argument("--budget", type=int, help="override every task's step budget")
    parser.add_argument("--seed", type=int, default=0)


PAPER_PROTOCOL = {"tasks": "all", "granularity": "all", "trials": 5, "budget": None}
_DEFAULTS = {"tasks": "all", "granularity": "goal", "trials": 1, "budget": None}


def apply_protocol(args: argparse.Namespace) -> str | None:
    """Fill in a named protocol's settings; the error text when the command also overrides one of them."""
    if args.protocol != "paper":
        return None
    changed = [f"--{name}" for name, default in _DEFAULTS.items()
               if getattr(args, name) != default and getattr(args, name) != PAPER_PROTOCOL[name]]
    if changed:
        return (f"--protocol paper fixes the tasks, granularities, trials and budgets; leave out {', '.join(changed)} "
                "(or drop --protocol to choose them yourself)")
    for name, value in PAPER_PROTOCOL.items():
        setattr(args, name, value)
    return None


class StopOnInterrupt:
    """While active, the first Ctrl+C (or SIGTERM) stops the batch cleanly; the second aborts at once.

    The world and evaluator processes run in sessions of their own, so the terminal's SIGINT reaches only
    this process: stopping closes them as each episode ends, and aborting kills them here.
    """

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self, control: BatchControl) -> None:
        self.control = control
        self.presses = 0
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> StopOnInterrupt:
        if threading.current_thread() is not threading.main_thread():
            return self  # signals are delivered to the main thread only; a caller there handles them
        for number in self.SIGNALS:
            self._previous[number] = signal.signal(number, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for number, handler in self._previous.items():
            signal.signal(number, handler)

    def _handle(self, number: int, frame: FrameType | None) -> None:
        self.presses += 1
        if self.presses == 1:
            _say(b"\nstopping; Ctrl+C again to abort\n")
            self.control.stop()
            return
        _say(b"\naborted: the running episodes' files are left without a result; rerun to redo them\n")
        child.kill_all()
        os._exit(130)


def _say(message: bytes) -> None:
    """os.write, not print: a handler that interrupts a print to the same stream must not print, and a
    closed terminal must not turn a stop into an exception."""
    with contextlib.suppress(OSError):
        os.write(2, message)


def check_arguments(args: argparse.Namespace) -> str | None:
    """The first argument that cannot work, as one line; None if all can."""
    minimum = {"--trials": (args.trials, 1), "--workers": (args.workers, 1), "--budget": (args.budget, 1),
               "--reflection": (args.reflection, 0), "--frames-every": (args.frames_every, 0),
               "--intervention-k": (args.intervention_k, 1)}
    for flag, (value, least) in minimum.items():
        if value is not None and value < least:
            return f"{flag} must be at least {least}, got {value}"
    return None


def run(args: argparse.Namespace) -> int:
    problem = check_arguments(args)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    problem = apply_protocol(args)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    if args.experience_from is not None and not args.reflection:
        print("error: --experience-from only applies with --reflection (the agent reflects and reads lessons)",
              file=sys.stderr)
        return 2
    try:
        backend = load_backend(args.backend)
    except BackendFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    mode = backend.side_views.default if args.side_views in (None, "default") else args.side_views
    options = RunOptions(
        paradigm=args.paradigm, observation=ObservationOptions(args.previous_frame, args.side_views is not None,
                                                               side_view_mode=mode),
        interventions=InterventionPolicy(args.intervention, args.intervention_k), step_budget=args.budget,
        seed=args.seed, frame_every_ticks=args.frames_every,
    )
    started = time.perf_counter()

    def progress(done: int, total: int, result: dict[str, Any]) -> None:
        width = 24
        filled = round(width * done / total) if total else width
        bar = "#" * filled + "-" * (width - filled)
        if result.get("success"):
            verdict = f"success after {result.get('steps_used', '?')} steps"
        elif result.get("end_reason") == "error":
            verdict = f"infrastructure error, not a result: {str(result.get('error')).splitlines()[0]}"
        else:
            verdict = f"{result.get('end_reason', '?')} after {result.get('steps_used', '?')} steps"
        print(f"[{bar}] {done}/{total}  {result['key']}: {verdict} ({time.perf_counter() - started:.0f} s)",
              flush=True)

    control = BatchControl()
    try:
        with StopOnInterrupt(control):
            rows = run_batch(args.tasks, args.granularity, args.agent, args.trials, args.workers, args.out,
                             options, progress, {"model_id": args.model_id, "base_url": args.base_url,
                                                 "reflection_every": args.reflection,
                                                 "experience_from": args.experience_from}, control,
                             backend=backend)
    except BatchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # results.jsonl became unwritable mid-run (a full disk): the batch was stopped
        print(f"error: cannot write to {args.out}: {exc}; the results so far are kept. Free space or fix "
              "permissions, then run the same command again to resume.", file=sys.stderr)
        return 1
    errors = [r for r in rows if r.get("end_reason") == "error"]
    print(f"{len(rows) - len(errors)} episode(s) run; results in {args.out / 'results.jsonl'}")
    if errors:
        print(f"{len(errors)} episode(s) ended in an infrastructure error; they are not results (see "
              f"{args.out / 'errors.jsonl'}). Run the same command again to retry them.", file=sys.stderr)
    if control.stopping:
        print(f"stopped: {len(control.interrupted)} episode(s) interrupted and {len(control.not_started)} not "
              "started; none of them is a result. Run the same command again to resume.", file=sys.stderr)
        return 130
    return 1 if errors else 0
