"""Batch runs: every (task, granularity, agent, trial) episode in its own world and evaluator processes.

Finished episodes are appended to results.jsonl as they end, so an interrupted run resumes by
skipping them.
"""

from __future__ import annotations

import fnmatch
import json
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.agents.actions import ActionSet
from core.agents.base import Agent, RandomAgent, ReplayAgent
from core.backends.profile import BackendProfile, load_backend
from core.backends.session import BackendSession
from core.evaluation.tasks import Task, load_suite, suite_folder
from core.game.errors import GameError
from core.recording.reader import EpisodeReader
from core.session.runner import EpisodeRunner, RunOptions

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
        with EpisodeReader(Path(argument)) as episode:
            replies = [r["raw_reply"] for r in episode.records() if r["source"] == "agent"]
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


def done_keys(results: Path) -> set[str]:
    if not results.exists():
        return set()
    keys = set()
    for line in results.read_text().splitlines():
        try:
            keys.add(json.loads(line)["key"])
        except (ValueError, KeyError):
            continue  # a line cut by a crash: that episode runs again
    return keys


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
              backend: BackendProfile | None = None) -> list[dict[str, Any]]:
    agent_options = agent_options or {}
    backend = backend or load_backend("builtin")
    from core.evaluation.profile import load_profile

    profile = load_profile(backend.memory_profile_path)
    actions = ActionSet.from_profile_data(profile.actions)
    tasks = select_tasks(task_selector, backend_tasks(backend, profile.flags))
    specs = [EpisodeSpec(t, g, agent_spec, trial) for t in tasks for g in granularities(granularity)
             for trial in range(trials)]
    out.mkdir(parents=True, exist_ok=True)
    results_path = out / "results.jsonl"
    finished = done_keys(results_path)
    todo = [s for s in specs if s.key not in finished]
    lock = threading.Lock()
    results: list[dict[str, Any]] = []

    def one(spec: EpisodeSpec) -> dict[str, Any]:
        episode_options = RunOptions(granularity=spec.granularity, paradigm=options.paradigm,
                                     observation=options.observation, interventions=options.interventions,
                                     step_budget=options.step_budget, seed=options.seed + spec.trial,
                                     frame_every_ticks=options.frame_every_ticks,
                                     settle_s=max(options.settle_s, backend.step_settle_s))
        agent = make_agent(spec.agent_spec, actions, episode_options.seed, options.paradigm,
                           {**agent_options, "granularity": spec.granularity})
        path = out / "episodes" / f"{spec.key}.h5"
        start = spec.task.start_for_reset()
        try:
            with BackendSession.open(backend, start_state=start if isinstance(start, str) else None) as session:
                session.prepare(start)
                assert session.evaluator is not None
                result = EpisodeRunner(session.game, session.evaluator, agent, actions, spec.task, episode_options,
                                       path).run()
        except GameError as exc:
            result = {"task_id": spec.task.id, "granularity": spec.granularity, "agent": agent.name,
                      "game": backend.name,
                      "success": False, "end_reason": "error", "error": str(exc), "category": spec.task.category,
                      "quest": spec.task.quest}
        result.update(key=spec.key, trial=spec.trial, agent_spec=spec.agent_spec,
                      episode=str(path.relative_to(out)) if path.exists() else None)
        with lock:
            with results_path.open("a") as handle:
                handle.write(json.dumps(result, default=str) + "\n")
            results.append(result)
            # Count only this invocation's specs: the folder may also hold other agents' episodes.
            progress(len(specs) - len(todo) + len(results), len(specs), result)
        return result

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for future in as_completed([pool.submit(one, spec) for spec in todo]):
            future.result()
    return results
