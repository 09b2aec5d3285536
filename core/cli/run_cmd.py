"""`python main.py run`: run episodes on the built-in world and record each to HDF5.

    python main.py run --tasks all --granularity all --agent random --trials 5 --workers 2 --out runs/random
    python main.py run --tasks q01*,category:navigation --granularity goal --agent random:7 --out runs/x
    OPENAI_API_KEY=... python main.py run --tasks q03* --agent model:gpt-5.2 --reflection 5 --out runs/gpt
    OPENAI_API_KEY=... python main.py run --protocol paper --agent model:gpt-5.2 --workers 2 --out runs/gpt-paper

Each episode gets its own world and evaluator processes. Interrupt and rerun with the same --out
to resume: finished episodes (in results.jsonl) are skipped.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from core.agents.observe import ObservationOptions
from core.session.batch import BatchError, run_batch
from core.session.interventions import InterventionPolicy
from core.session.runner import RunOptions


def add_arguments(parser: argparse.ArgumentParser) -> None:
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
    parser.add_argument("--side-views", action="store_true", help="also show the agent left and right views")
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


def run(args: argparse.Namespace) -> int:
    problem = apply_protocol(args)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    if args.experience_from is not None and not args.reflection:
        print("error: --experience-from only applies with --reflection (the agent reflects and reads lessons)",
              file=sys.stderr)
        return 2
    options = RunOptions(
        paradigm=args.paradigm, observation=ObservationOptions(args.previous_frame, args.side_views),
        interventions=InterventionPolicy(args.intervention, args.intervention_k), step_budget=args.budget,
        seed=args.seed, frame_every_ticks=args.frames_every,
    )
    started = time.perf_counter()

    def progress(done: int, total: int, result: dict[str, Any]) -> None:
        width = 24
        filled = round(width * done / total) if total else width
        bar = "#" * filled + "-" * (width - filled)
        verdict = "success" if result.get("success") else result.get("end_reason", "?")
        print(f"[{bar}] {done}/{total}  {result['key']}: {verdict} after {result.get('steps_used', '?')} steps "
              f"({time.perf_counter() - started:.0f} s)", flush=True)

    try:
        results = run_batch(args.tasks, args.granularity, args.agent, args.trials, args.workers, args.out,
                            options, progress, {"model_id": args.model_id, "base_url": args.base_url,
                                                "reflection_every": args.reflection,
                                                "experience_from": args.experience_from})
    except BatchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{len(results)} episode(s) run; results in {args.out / 'results.jsonl'}")
    return 0
