"""`python main.py run`: run episodes on a backend (the built-in world by default) and record each to HDF5.

    python main.py run --tasks all --granularity all --agent random --trials 5 --workers 2 --out runs/random
    python main.py run --tasks q01*,category:navigation --granularity goal --agent random:7 --out runs/x
    OPENAI_API_KEY=... python main.py run --tasks q03* --agent model:gpt-5.2 --reflection 5 --out runs/gpt
    python main.py run --backend minetest --tasks all --agent random --out runs/minetest

Each episode gets its own game and evaluator processes. Interrupt and rerun with the same --out
to resume: finished episodes (in results.jsonl) are skipped.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from core.agents.observe import ObservationOptions
from core.backends.profile import BackendFileError, load_backend
from core.session.batch import BatchError, run_batch
from core.session.interventions import InterventionPolicy
from core.session.runner import RunOptions


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", default="builtin", metavar="NAME|PATH",
                        help="the game: builtin (default), minetest, ryujinx, or a backend file "
                             "(docs/backend-format.md)")
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


def run(args: argparse.Namespace) -> int:
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
        verdict = "success" if result.get("success") else result.get("end_reason", "?")
        print(f"[{bar}] {done}/{total}  {result['key']}: {verdict} after {result.get('steps_used', '?')} steps "
              f"({time.perf_counter() - started:.0f} s)", flush=True)

    try:
        results = run_batch(args.tasks, args.granularity, args.agent, args.trials, args.workers, args.out,
                            options, progress, {"model_id": args.model_id, "base_url": args.base_url,
                                                "reflection_every": args.reflection}, backend=backend)
    except BatchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{len(results)} episode(s) run; results in {args.out / 'results.jsonl'}")
    return 0
