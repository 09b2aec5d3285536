"""`python main.py run`: run episodes on a backend (the built-in world by default) and record each to HDF5.

    python main.py run --tasks all --granularity all --agent random --trials 5 --workers 2 --out runs/random
    python main.py run --tasks q01*,category:navigation --granularity goal --agent random:7 --out runs/x
    OPENAI_API_KEY=... python main.py run --tasks q03* --agent model:gpt-5.2 --reflection 5 --out runs/gpt
    OPENAI_API_KEY=... python main.py run --protocol paper --agent model:gpt-5.2 --workers 2 --out runs/gpt-paper
    python main.py run --backend minetest --tasks all --agent random --out runs/minetest
    python main.py run --protocol paper --agent random --ray auto --out runs/random   # on a Ray cluster

Each episode gets its own game and evaluator processes. Ctrl+C stops cleanly: no new episodes start,
running ones stop after their current step and are marked interrupted (not results); Ctrl+C again
aborts at once. Rerun the same command to resume: episodes with a result (results.jsonl) are skipped,
interrupted ones and those that ended in an infrastructure error (errors.jsonl) run again. With --ray the
same episodes run as Ray tasks, and their files come back to --out (docs/cluster.md).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

from core.agents.models.rate_limit import RateLimits
from core.agents.observe import ObservationOptions
from core.backends.profile import BackendFileError, BackendProfile, load_backend, with_memory_profile
from core.cli.progress import RunProgress
from core.game import child
from core.session.batch import BatchError, check_run, granularities, run_batch
from core.session.batch_control import BatchControl
from core.session.batch_driver import EpisodeExecutor
from core.session.capacity import capacity, check_workers
from core.session.interventions import InterventionPolicy
from core.session.local_pool import LocalPool
from core.session.protocol import PROTOCOLS, RUN_DEFAULTS, ProtocolError, run_settings, suite_ids
from core.session.run_folder import is_error
from core.session.runner import RunOptions
from core.session.task_source import TaskSourceError, backend_of_tasks, split_selector


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", metavar="NAME|PATH",
                        help="the game: builtin, minetest, ryujinx, a name in POKEGYM_HOME/backends, or a backend "
                             "file, whose tasks are the tasks/ folder beside it (docs/backend-format.md). Default: "
                             "the backend the --tasks files name, else builtin")
    parser.add_argument("--profile", type=Path, metavar="PATH",
                        help="read the game through this memory profile file instead of the backend's own (for "
                             "instance one the memory finder wrote; docs/profile-format.md)")
    parser.add_argument("--protocol", choices=sorted(PROTOCOLS),
                        help="paper: the 30 suite tasks x all 3 granularities x 5 trials with each task's own step "
                             "budget (the benchmark's protocol); leave out --tasks, --granularity, --trials and "
                             "--budget")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the plan (every episode: task, granularity, trial, budget, seed) and start nothing")
    parser.add_argument("--tasks", metavar="SELECTOR|PATH|DIR",
                        help="all (default), suite, task ids or globs, quests, category:NAME, or task files and "
                             "folders (a part with a / or ending in .yaml), which replace the backend's own tasks "
                             "(comma list)")
    parser.add_argument("--granularity", help="visual, step, goal (default) or all")
    parser.add_argument("--agent", default="random",
                        help="random[:SEED], random+listen[:SEED] (random, but turns away when its last step's sound "
                             "held a bump), replay:EPISODE.h5, or model:PRESET (claude-sonnet-4.6, gpt-5.2, "
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
    parser.add_argument("--trials", type=int, help="episodes per task and granularity (default 1)")
    parser.add_argument("--attach", nargs="?", const="auto", metavar="PID|FILE",
                        help="drive a game that is already running instead of launching one: an external game's "
                             "pid (or nothing: found by the backend's attach section), or for the built-in world "
                             "the connection file `python main.py world` printed. One episode at a time; the game "
                             "is left running; start states are reached by the backend's macros only")
    parser.add_argument("--workers", type=workers_count, metavar="N|auto",
                        help="episodes at once (each has its own world; default 1); auto: as many as this machine "
                             "holds at a model's pace, by its CPUs, memory and the rate limits given (README, "
                             "Performance). With --ray: at most this many handed to the cluster at once (default: as "
                             "many as its CPUs take)")
    parser.add_argument("--out", type=Path, help="folder for results.jsonl and episodes/ (required unless --dry-run)")
    parser.add_argument("--paradigm", choices=["discrete", "continuous"], default="discrete")
    parser.add_argument("--previous-frame", action="store_true", help="also show the agent the previous frame")
    parser.add_argument("--side-views", nargs="?", const="default", choices=["default", "turn", "instant"],
                        help="also show the agent left and right views: by turning the camera (turn: costs game "
                             "time, comparable with emulator runs; the backend's default) or instant (built-in "
                             "world only, marked in the results)")
    parser.add_argument("--audio", choices=["none", "clip", "spectrogram"], default="none",
                        help="give the agent the sound of its last step: clip (the audio itself, for models that "
                             "take audio) or spectrogram (a picture of it, for any vision model); docs/observations.md")
    parser.add_argument("--intervention", choices=["none", "text", "physical"], default="none")
    parser.add_argument("--intervention-k", type=int, default=3, help="consecutive ineffective moves (default 3)")
    parser.add_argument("--budget", type=int, help="override every task's step budget")
    parser.add_argument("--seed", type=int, default=0,
                        help="the run's seed; every episode's own seed is derived from it, its task, granularity "
                             "and trial (the same run seed gives the same episodes)")
    parser.add_argument("--episode-timeout", type=float, metavar="SECONDS",
                        help="stop an episode that runs longer (a hung game or API) as an infrastructure error")
    parser.add_argument("--retries", type=int, default=0, metavar="N",
                        help="run an episode that ended in an infrastructure error again, up to N times (default 0: "
                             "rerun the command to retry); every failed try stays in errors.jsonl")
    limits = parser.add_argument_group("model request limits (per provider and server, shared by the whole run)")
    limits.add_argument("--concurrent-requests", type=int, metavar="N", help="requests in flight at once")
    limits.add_argument("--requests-per-minute", type=float, metavar="N",
                        help="request starts per minute, spaced evenly")
    cluster = parser.add_argument_group("Ray (the optional `ray` extra; docs/cluster.md)")
    cluster.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS",
                         help="run the episodes as Ray tasks: on a private local Ray (no ADDRESS), the cluster this "
                              "machine belongs to (auto), or the head at HOST:PORT")
    cluster.add_argument("--cpus-per-episode", type=float, metavar="N",
                         help="CPUs each episode reserves on a node (default 2: the game and the evaluator)")
    cluster.add_argument("--ray-resource", action="append", default=[], metavar="NAME[=AMOUNT]",
                         help="a custom resource each episode needs (only nodes that advertise it run episodes)")


def workers_count(text: str) -> int | str:
    """--workers: a count, or "auto"."""
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a number of episodes at once, or auto; got {text!r}") from None


def resolve_workers(args: argparse.Namespace) -> str | None:
    """Turn `--workers auto` into a count, and refuse a count this machine cannot hold (with the count that
    fits); None when the count can run. With --ray the cluster's nodes hold the episodes, not this machine."""
    if args.workers == "auto" and args.ray is not None:
        args.workers = None  # as many as the cluster's CPUs take
        return None
    limits = capacity(args.concurrent_requests, args.requests_per_minute)
    if args.workers == "auto":
        args.workers = limits.workers
        print(f"--workers auto: {args.workers} episodes at once (limited by {limits.reason()})", flush=True)
        return None
    if args.workers is None:
        return None
    if args.ray is not None:
        return f"--workers must be at least 1, got {args.workers}" if args.workers < 1 else None
    return check_workers(args.workers, limits)


def apply_protocol(args: argparse.Namespace) -> str | None:
    """Fill in the run's tasks, granularity, trials and budget (a protocol's, or the defaults under what was
    given); the error text when the command also sets one a protocol fixes, even to the protocol's value."""
    given = {name: getattr(args, name) for name in RUN_DEFAULTS}
    try:
        settings = run_settings(args.protocol, given)
    except ProtocolError as exc:
        return str(exc)
    for name, value in settings.items():
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
        self.control.abort()
        os._exit(130)


def _say(message: bytes) -> None:
    """os.write, not print: a handler that interrupts a print to the same stream must not print, and a
    closed terminal must not turn a stop into an exception."""
    with contextlib.suppress(OSError):
        os.write(2, message)


def check_arguments(args: argparse.Namespace) -> str | None:
    """The first argument that cannot work, as one line; None if all can."""
    minimum = {"--trials": (args.trials, 1), "--budget": (args.budget, 1),
               "--reflection": (args.reflection, 0), "--frames-every": (args.frames_every, 0),
               "--intervention-k": (args.intervention_k, 1), "--retries": (args.retries, 0),
               "--concurrent-requests": (args.concurrent_requests, 1)}
    for flag, (value, least) in minimum.items():
        if value is not None and value < least:
            return f"{flag} must be at least {least}, got {value}"
    positive = {"--episode-timeout": args.episode_timeout, "--requests-per-minute": args.requests_per_minute,
                "--cpus-per-episode": args.cpus_per_episode}
    for flag, value in positive.items():
        if value is not None and not value > 0:
            return f"{flag} must be more than 0, got {value:g}"
    if args.ray is None and (args.cpus_per_episode is not None or args.ray_resource):
        return "--cpus-per-episode and --ray-resource apply to Ray runs; add --ray [ADDRESS]"
    if args.attach is not None and (args.ray is not None or args.workers not in (None, 1)):
        return "--attach drives the one game already running, one episode at a time: leave out --ray and --workers"
    return None


def make_executor(args: argparse.Namespace, backend: BackendProfile) -> EpisodeExecutor:
    """The local pool, or a Ray executor already connected and with every node checked (BatchError if not)."""
    if args.ray is None:
        return LocalPool(args.workers or 1)
    from core.cluster.resources import episode_resources, parse_resource

    try:
        from core.cluster.ray_executor import RayExecutor
    except ModuleNotFoundError as exc:
        if exc.name != "ray" and not str(exc.name).startswith("ray."):
            raise
        raise BatchError("--ray needs Ray, which is an optional extra: pip install -e '.[ray]'") from None

    try:
        extra = dict(parse_resource(text) for text in args.ray_resource)
    except ValueError as exc:
        raise BatchError(str(exc)) from None
    executor = RayExecutor(args.ray, episode_resources(backend.name, args.cpus_per_episode, extra), args.workers,
                           needed_env=_key_variables(args.agent))
    cluster = executor.connect()
    where = "a private local Ray" if cluster.started_here else f"the Ray cluster at {cluster.address}"
    print(f"running on {where} ({cluster.cpus:g} CPUs; {executor.resources.describe()})", flush=True)
    return executor


def _key_variables(agent: str) -> tuple[str, ...]:
    """The API key variable a model agent reads, which every node must have (keys never travel through Ray)."""
    if not agent.startswith("model:"):
        return ()
    from core.agents.models.base import ModelError, config_for

    try:
        key_env = config_for(agent.partition(":")[2]).key_env
    except ModelError:
        return ()  # an unknown model is reported by the run itself, in the usual words
    return key_env[:1]


def _print_plan(args: argparse.Namespace, options: RunOptions, agent_options: dict[str, Any],
                backend: BackendProfile) -> int:
    """--dry-run: every episode the command would run, with its budget and seed; nothing is started or written."""
    try:
        specs, _ = check_run(args.tasks, args.granularity, args.agent, args.trials, options, agent_options, backend)
    except BatchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{'task':30s} {'granularity':14s} {'trial':>5s} {'budget':>6s} {'seed':>10s}  key")
    for spec in specs:
        budget = args.budget or spec.task.step_budget
        print(f"{spec.task.id:30s} {spec.granularity:14s} {spec.trial:5d} {budget:6d} {spec.seed(args.seed):10d}  "
              f"{spec.key}")
    tasks = len({spec.task.id for spec in specs})
    per_task = len(specs) // tasks if tasks else 0
    print(f"{len(specs)} episode(s): {tasks} task(s) x {per_task} each "
          f"({len({spec.granularity for spec in specs})} granularities x {args.trials} trials), agent {args.agent}, "
          f"run seed {args.seed}; nothing was started (--dry-run)")
    return 0


def chosen_backend(args: argparse.Namespace) -> str:
    """--backend as given; without it the backend the --tasks files name (by name or path), else builtin."""
    if args.backend is not None:
        return str(args.backend)
    paths, _ = split_selector(args.tasks or "")
    return (backend_of_tasks(paths) if paths else None) or "builtin"


def run(args: argparse.Namespace) -> int:
    problem = check_arguments(args) or resolve_workers(args)
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
        backend = with_memory_profile(load_backend(chosen_backend(args)), args.profile)
    except (BackendFileError, TaskSourceError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.attach == "auto" and backend.kind == "builtin":
        print("error: attaching to the built-in world needs the connection file that `python main.py world` "
              "printed: --attach PATH", file=sys.stderr)
        return 2
    if args.paradigm == "continuous" and backend.continuous_motion is None:
        print(f"warning: {backend.name} has no continuous-control calibration (`continuous_motion` in its backend "
              "file), so a continuous move counts as ineffective below the discrete ε of 0.1 m, not below a share "
              f"of what the stick moves on open ground. Calibrate it: python main.py backend calibrate {backend.name} "
              "--write (docs/metrics.md)", file=sys.stderr)
    mode = backend.side_views.default if args.side_views in (None, "default") else args.side_views
    options = RunOptions(
        paradigm=args.paradigm, observation=ObservationOptions(args.previous_frame, args.side_views is not None,
                                                               side_view_mode=mode, audio=args.audio),
        interventions=InterventionPolicy(args.intervention, args.intervention_k), step_budget=args.budget,
        seed=args.seed, frame_every_ticks=args.frames_every,
    )
    agent_options = {"model_id": args.model_id, "base_url": args.base_url, "reflection_every": args.reflection,
                     "experience_from": args.experience_from}
    if args.protocol is not None:
        try:
            suite, note = suite_ids()
        except ProtocolError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(f"--protocol {args.protocol}: the {len(suite)} suite tasks x {len(granularities(args.granularity))} "
              "granularities x "
              f"{args.trials} trials" + (f"; {note}" if note else ""), flush=True)
    if args.dry_run:
        return _print_plan(args, options, agent_options, backend)
    if args.out is None:
        print("error: --out FOLDER is required (where results.jsonl and the episodes go); "
              "--dry-run prints the plan without one", file=sys.stderr)
        return 2
    try:
        limits = RateLimits(args.concurrent_requests, args.requests_per_minute)
        if args.ray is not None:  # mistakes in the command first: starting or joining Ray takes seconds
            check_run(args.tasks, args.granularity, args.agent, args.trials, options, agent_options, backend)
        executor = make_executor(args, backend)
    except BatchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    display = RunProgress()
    control = BatchControl()
    try:
        # After Ray's start-up, which sets its own SIGTERM handler: ours must be the one that runs.
        with StopOnInterrupt(control):
            rows = run_batch(args.tasks, args.granularity, args.agent, args.trials, args.workers or 1, args.out,
                             options, display.episode, agent_options, control, executor=executor,
                             episode_timeout_s=args.episode_timeout, retries=args.retries, limits=limits,
                             status=display.status, backend=backend, attach=args.attach,
                             memory_profile=args.profile)
    except BatchError as exc:
        display.close()
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # results.jsonl became unwritable mid-run (a full disk): the batch was stopped
        display.close()
        print(f"error: cannot write to {args.out}: {exc}; the results so far are kept. Free space or fix "
              "permissions, then run the same command again to resume.", file=sys.stderr)
        return 1
    finally:
        executor.close()
    display.close()
    results = [r for r in rows if not is_error(r)]
    resolved = {r.get("key") for r in results}  # a failed try that --retries then ran to a result
    errors = [r for r in rows if r.get("end_reason") == "error" and r.get("key") not in resolved]
    broken = sorted({str(r.get("task_id")) for r in rows if r.get("end_reason") == "task_error"})
    if broken:
        print(f"{len(broken)} task(s) are broken (their success holds at the start state), so they gave no results: "
              f"{', '.join(broken)}. Fix them: python main.py tasks validate FILE --drive", file=sys.stderr)
    print(f"{len(results)} episode(s) run; results in {args.out / 'results.jsonl'}")
    if errors:
        print(f"{len(errors)} episode(s) ended in an infrastructure error; they are not results (see "
              f"{args.out / 'errors.jsonl'}). Run the same command again to retry them.", file=sys.stderr)
    if control.stopping:
        print(f"stopped: {len(control.interrupted)} episode(s) interrupted and {len(control.not_started)} not "
              "started; none of them is a result. Run the same command again to resume.", file=sys.stderr)
        return 130
    return 1 if errors else 0
