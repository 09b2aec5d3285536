"""Batch runs: every (task, granularity, agent, trial) episode in its own world and evaluator processes.

Results are appended to results.jsonl as they end, infrastructure errors to errors.jsonl, so a resume
skips the results and runs everything else again (core/session/run_folder.py). A BatchControl stops
the batch cleanly from another thread (Ctrl+C).
"""

from __future__ import annotations

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
from core.evaluation.client import EvaluatorClient
from core.evaluation.profile import load_profile
from core.evaluation.tasks import Task, load_suite
from core.game.builtin import BuiltinWorld
from core.game.errors import GameError
from core.paths import PROFILES_DIR, TASKS_DIR
from core.recording.reader import EpisodeReader
from core.session import run_folder
from core.session.batch_control import INTERRUPTED, BatchControl
from core.session.runner import EpisodeRunner, RunOptions

SIGNAL_CHECK_S = 0.2
GRANULARITY_NAMES = {"visual": "visual_guided", "step": "step_guided", "goal": "goal_only"}


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
        return RandomAgent(actions, seed=int(argument) if argument else seed, paradigm=paradigm)
    if name == "replay":
        if not Path(argument).is_file():
            raise BatchError(f"cannot replay {argument!r}: no such file (give replay:PATH/TO/EPISODE.h5)")
        try:
            with EpisodeReader(Path(argument)) as episode:
                replies = [r["raw_reply"] for r in episode.records() if r["source"] == "agent"]
        except (OSError, ValueError) as exc:
            raise BatchError(f"cannot replay {argument!r}: {exc}") from None
        return ReplayAgent(actions, replies, paradigm, source=argument)
    if name == "model":
        from core.agents.models.base import ModelError, config_for
        from core.agents.models.clients import make_client
        from core.agents.reflection import ExperienceLibrary
        from core.agents.vlm_agent import VLMAgent

        try:
            config = config_for(argument, model_id=options.get("model_id"), base_url=options.get("base_url"))
            client = make_client(config)
        except ModelError as exc:
            raise BatchError(str(exc)) from None
        reflection = int(options.get("reflection_every") or 0)
        library = ExperienceLibrary.for_model(config.model) if reflection else None
        return VLMAgent(client, actions, options.get("granularity", "goal_only"), paradigm,
                        reflection_every=reflection, library=library)
    raise BatchError(f"unknown agent {spec!r}; use random[:SEED], replay:EPISODE.h5 or model:PRESET "
                     "(claude-sonnet-4.6, gpt-5.2, gemini-3-pro, or provider:model-id)")


def run_batch(task_selector: str, granularity: str, agent_spec: str, trials: int, workers: int, out: Path,
              options: RunOptions, progress: Callable[[int, int, dict[str, Any]], None],
              agent_options: dict[str, Any] | None = None,
              control: BatchControl | None = None) -> list[dict[str, Any]]:
    """Run what `out` has no result for yet; returns the rows written (results and errors) by this call.

    Raises BatchError for bad arguments (before `out` is created) and an unusable output folder.
    """
    agent_options = agent_options or {}
    control = control or BatchControl()
    profile = load_profile(PROFILES_DIR / "builtin_world.yaml")
    actions = ActionSet.from_profile_data(profile.actions)
    tasks = select_tasks(task_selector, load_suite(TASKS_DIR, profile.flags))
    specs = [EpisodeSpec(t, g, agent_spec, trial) for t in tasks for g in granularities(granularity)
             for trial in range(trials)]
    if not specs:
        raise BatchError("nothing to run: --trials must be at least 1")
    # An unknown agent, a missing key or an unreadable replay file is reported before anything is made.
    make_agent(agent_spec, actions, options.seed, options.paradigm,
               {**agent_options, "granularity": specs[0].granularity})
    try:
        run_folder.prepare(out)
    except run_folder.RunFolderError as exc:
        raise BatchError(str(exc)) from None
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
                                     frame_every_ticks=options.frame_every_ticks)
        agent = make_agent(spec.agent_spec, actions, episode_options.seed, options.paradigm,
                           {**agent_options, "granularity": spec.granularity})
        path = out / run_folder.EPISODES / f"{spec.key}.h5"
        path.unlink(missing_ok=True)  # an earlier interrupted or failed try: replaced, never appended to
        try:
            with BuiltinWorld.launch(renderer="software") as world, EvaluatorClient.launch(world.pid) as evaluator:
                evaluator.wait_locked()
                runner = EpisodeRunner(world, evaluator, agent, actions, spec.task, episode_options, path)
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
                      "success": False, "end_reason": run_folder.ERROR, "error": str(exc),
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
    return results
