"""Batch runs: every (task, granularity, agent, trial) episode in its own world and evaluator processes.

Results are appended to results.jsonl as they end, infrastructure errors to errors.jsonl, so a resume
skips the results and runs everything else again (core/session/run_folder.py). A BatchControl stops
the batch cleanly from another thread (Ctrl+C).
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import threading
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.agents.actions import ActionSet
from core.agents.base import Agent, RandomAgent, ReplayAgent
from core.agents.reflection import ExperienceError, ExperienceLibrary, merge_libraries, write_atomically
from core.backends.profile import BackendProfile, load_backend
from core.backends.session import BackendSession
from core.evaluation.profile import load_profile
from core.evaluation.tasks import Task, load_suite, suite_folder
from core.game.errors import GameError
from core.recording.errors import EpisodeFileError
from core.recording.reader import EpisodeReader
from core.session import run_folder
from core.session.batch_control import INTERRUPTED, BatchControl
from core.session.runner import EpisodeRunner, RunOptions

SIGNAL_CHECK_S = 0.2
GRANULARITY_NAMES = {"visual": "visual_guided", "step": "step_guided", "goal": "goal_only"}
EXPERIENCE_DIR = "experience"


class BatchError(ValueError):
    pass


@dataclass(frozen=True)
class EpisodeSpec:
    task: Task
    granularity: str
    agent_spec: str
    trial: int

    @property
    def key(self) -> str:
        agent = self.agent_spec.replace(":", "-").replace("/", "_").replace("=", "")
        return f"{self.task.id}__{self.granularity}__{agent}__t{self.trial}"


def select_tasks(selector: str, tasks: list[Task]) -> list[Task]:
    chosen: list[Task] = []
    for part in [p.strip() for p in selector.split(",") if p.strip()]:
        if part == "all":
            matched = tasks
        elif part.startswith("category:"):
            matched = [t for t in tasks if t.category == part.split(":", 1)[1]]
        else:
            matched = [t for t in tasks if fnmatch.fnmatch(t.id, part) or t.quest == part]
        if not matched:
            raise BatchError(f"no task matches {part!r}; see `python main.py tasks list`")
        chosen += [t for t in matched if t not in chosen]
    return chosen


def granularities(choice: str) -> list[str]:
    if choice == "all":
        return list(GRANULARITY_NAMES.values())
    if choice in GRANULARITY_NAMES:
        return [GRANULARITY_NAMES[choice]]
    if choice in GRANULARITY_NAMES.values():
        return [choice]
    raise BatchError(f"granularity must be visual, step, goal or all, got {choice!r}")


def make_agent(spec: str, actions: ActionSet, seed: int, paradigm: str,
               options: dict[str, Any] | None = None) -> Agent:
    options = options or {}
    name, _, argument = spec.partition(":")
    if name == "random":
        # a fixed SEED still varies by trial (the caller passes run seed + trial), or five trials would be one
        return RandomAgent(actions, seed=int(argument) + seed if argument else seed, paradigm=paradigm)
    if name == "replay":
        if not Path(argument).is_file():
            raise BatchError(f"cannot replay {argument!r}: no such file (give replay:PATH/TO/EPISODE.h5)")
        try:
            with EpisodeReader(Path(argument)) as episode:
                replies = [r["raw_reply"] for r in episode.records() if r["source"] == "agent"]
        except (OSError, EpisodeFileError) as exc:
            raise BatchError(f"cannot replay {argument!r}: {exc}") from None
        return ReplayAgent(actions, replies, paradigm, source=argument)
    if name == "model":
        from core.agents.models.base import ModelError, config_for
        from core.agents.models.clients import make_client
        from core.agents.vlm_agent import VLMAgent

        try:
            config = config_for(argument, model_id=options.get("model_id"), base_url=options.get("base_url"))
            client = make_client(config)
        except ModelError as exc:
            raise BatchError(str(exc)) from None
        reflection = int(options.get("reflection_every") or 0)
        library = options.get("experience")
        if reflection and library is None:
            library = ExperienceLibrary()  # never an earlier run's lessons unless the caller names them
        return VLMAgent(client, actions, options.get("granularity", "goal_only"), paradigm,
                        reflection_every=reflection, library=library)
    raise BatchError(f"unknown agent {spec!r}; use random[:SEED], replay:EPISODE.h5 or model:PRESET "
                     "(claude-sonnet-4.6, gpt-5.2, gemini-3-pro, or provider:model-id)")


def starting_experience(out: Path, experience_from: Path | None) -> ExperienceLibrary:
    """The library every episode of this run starts from, snapshotted as RUN/experience/start.json. A resumed
    run keeps the start it had; naming a different one for the same folder is refused."""
    start_file = out / EXPERIENCE_DIR / "start.json"
    try:
        chosen = ExperienceLibrary.load(experience_from) if experience_from is not None else ExperienceLibrary()
        if start_file.exists():
            recorded = ExperienceLibrary.load(start_file)
            recorded.source = json.loads(start_file.read_text()).get("source", recorded.source)
            if recorded.lessons != chosen.lessons:
                raise BatchError(f"{out} was started from the experience library {recorded.source!r}; resume it "
                                 "with the same --experience-from, or choose another --out")
            return recorded
    except ExperienceError as exc:
        raise BatchError(str(exc)) from None
    write_atomically(start_file, chosen.to_json())
    return chosen


def finish_experience(out: Path, start: ExperienceLibrary, keys: list[str]) -> Path:
    """Merge the episodes' new lessons, in the run's fixed episode order, into RUN/experience/library.json."""
    learned = []
    for key in keys:
        path = out / EXPERIENCE_DIR / "episodes" / f"{key}.json"
        if path.exists():
            with contextlib.suppress(ExperienceError):  # an episode cut before its first lesson was saved
                learned.append(ExperienceLibrary.load(path))
    merged = merge_libraries(start, learned)
    target = out / EXPERIENCE_DIR / "library.json"
    write_atomically(target, merged.to_json())
    return target


def plan_episodes(task_selector: str, granularity: str, agent_spec: str, trials: int,
                  backend: BackendProfile | None = None, flags: list[str] | None = None) -> list[EpisodeSpec]:
    """Every episode of a run on `backend` (the built-in world by default), in its fixed order
    (task, granularity, trial)."""
    backend = backend or load_backend("builtin")
    if flags is None:
        flags = load_profile(backend.memory_profile_path).flags
    tasks = select_tasks(task_selector, backend_tasks(backend, flags))
    return [EpisodeSpec(t, g, agent_spec, trial) for t in tasks for g in granularities(granularity)
            for trial in range(trials)]


def backend_tasks(backend: BackendProfile, flags: list[str]) -> list[Task]:
    """The backend's task suite (assets/tasks/ or assets/tasks/BACKEND/), each checked to name this backend."""
    folder = suite_folder(backend.name)
    tasks = load_suite(folder, flags, backend.start_states) if folder.is_dir() else []
    wrong = [t.id for t in tasks if t.backend != backend.name]
    if wrong:
        raise BatchError(f"tasks in {folder} name another backend than {backend.name!r}: {wrong}")
    return tasks


def run_batch(task_selector: str, granularity: str, agent_spec: str, trials: int, workers: int, out: Path,
              options: RunOptions, progress: Callable[[int, int, dict[str, Any]], None],
              agent_options: dict[str, Any] | None = None,
              control: BatchControl | None = None,
              backend: BackendProfile | None = None) -> list[dict[str, Any]]:
    """Run what `out` has no result for yet; returns the rows written (results and errors) by this call.

    Raises BatchError for bad arguments (before `out` is created) and an unusable output folder.
    """
    agent_options = agent_options or {}
    control = control or BatchControl()
    backend = backend or load_backend("builtin")
    profile = load_profile(backend.memory_profile_path)
    actions = ActionSet.from_profile_data(profile.actions)
    specs = plan_episodes(task_selector, granularity, agent_spec, trials, backend, profile.flags)
    if not specs:
        raise BatchError("nothing to run: --trials must be at least 1")
    # An unknown agent, a missing key or an unreadable replay file is reported before anything is made.
    make_agent(agent_spec, actions, options.seed, options.paradigm,
               {**agent_options, "granularity": specs[0].granularity})
    try:
        run_folder.prepare(out)
    except run_folder.RunFolderError as exc:
        raise BatchError(str(exc)) from None
    reflecting = bool(agent_options.get("reflection_every")) and agent_spec.startswith("model:")
    experience = starting_experience(out, agent_options.get("experience_from")) if reflecting else None
    results_path, errors_path = out / run_folder.RESULTS, out / run_folder.ERRORS
    finished = run_folder.finished_keys(out)
    todo = [s for s in specs if s.key not in finished]
    lock = threading.Lock()
    results: list[dict[str, Any]] = []

    def one(spec: EpisodeSpec) -> None:
        if control.stopping:
            control.skipped(spec.key)
            return
        episode_options = RunOptions(granularity=spec.granularity, paradigm=options.paradigm,
                                     observation=options.observation, interventions=options.interventions,
                                     step_budget=options.step_budget, seed=options.seed + spec.trial,
                                     frame_every_ticks=options.frame_every_ticks,
                                     settle_s=max(options.settle_s, backend.step_settle_s))
        library = experience.copy_to(out / EXPERIENCE_DIR / "episodes" / f"{spec.key}.json") if experience else None
        agent = make_agent(spec.agent_spec, actions, episode_options.seed, options.paradigm,
                           {**agent_options, "granularity": spec.granularity, "experience": library})
        path = out / run_folder.EPISODES / f"{spec.key}.h5"
        path.unlink(missing_ok=True)  # an earlier interrupted or failed try: replaced, never appended to
        start = spec.task.start_for_reset()
        try:
            with BackendSession.open(backend, start_state=start if isinstance(start, str) else None) as session:
                session.prepare(start)
                assert session.evaluator is not None
                runner = EpisodeRunner(session.game, session.evaluator, agent, actions, spec.task, episode_options,
                                       path)
                if not control.start(runner):
                    control.skipped(spec.key)
                    return
                try:
                    result = runner.run()
                finally:
                    control.finished(runner)
        except GameError as exc:
            if control.stopping:  # stopped while its world was starting: not run, not an error
                control.skipped(spec.key)
                return
            result = {"task_id": spec.task.id, "granularity": spec.granularity, "agent": agent.name,
                      "game": backend.name, "success": False, "end_reason": run_folder.ERROR, "error": str(exc),
                      "category": spec.task.category, "quest": spec.task.quest}
        if result["end_reason"] == INTERRUPTED:
            control.was_interrupted(spec.key)  # its file says so; it is no result and runs again on resume
            return
        result.update(key=spec.key, trial=spec.trial, agent_spec=spec.agent_spec,
                      episode=str(path.relative_to(out)) if path.exists() else None)
        with lock:
            with (errors_path if run_folder.is_error(result) else results_path).open("a") as handle:
                handle.write(json.dumps(result, default=str) + "\n")
            results.append(result)
            # Count only this invocation's specs: the folder may also hold other agents' episodes.
            progress(len(specs) - len(todo) + len(results), len(specs), result)

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        pending = {pool.submit(one, spec) for spec in todo}
        try:
            while pending:
                # Wake regularly: the kernel may deliver Ctrl+C to any thread, and Python runs the handler
                # only when the main thread runs, not while it sleeps in an untimed wait.
                done, pending = wait(pending, timeout=SIGNAL_CHECK_S, return_when=FIRST_COMPLETED)
                for future in done:
                    future.result()
        except BaseException:
            control.stop()  # a failure (a full disk, a bug) ends the batch cleanly instead of running the queue
            raise
    if experience is not None:
        done = run_folder.finished_keys(out)  # interrupted and failed episodes run again: not their lessons
        finish_experience(out, experience, [spec.key for spec in specs if spec.key in done])
    return results
