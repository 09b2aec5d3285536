"""What a batch run is made of: its episodes (task x granularity x agent x trial, each with a stable key) and
the agent each one plays with. Shared by the driver (core/session/batch.py) and the episode function that
runs each one, in a local worker thread or on a Ray worker (core/session/episode_job.py)."""

from __future__ import annotations

import fnmatch
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.agents.actions import ActionSet
from core.agents.base import Agent, RandomAgent, ReplayAgent
from core.agents.reflection import ExperienceLibrary
from core.backends.profile import BackendProfile, load_backend
from core.evaluation.profile import load_profile
from core.evaluation.tasks import Task
from core.recording.errors import EpisodeFileError
from core.recording.reader import EpisodeReader
from core.session.free_play import FreePlay
from core.session.protocol import ProtocolError, suite_ids
from core.session.task_source import (
    TaskSourceError,
    given_task_files,
    is_shipped,
    load_tasks_for,
    own_tasks,
    split_selector,
)

GRANULARITY_NAMES = {"visual": "visual_guided", "step": "step_guided", "goal": "goal_only"}


class BatchError(ValueError):
    pass


@dataclass(frozen=True)
class EpisodeSpec:
    task: Task | FreePlay  # FreePlay: an unjudged episode on a backend with no memory profile
    granularity: str
    agent_spec: str
    trial: int

    @property
    def key(self) -> str:
        agent = self.agent_spec.replace(":", "-").replace("/", "_").replace("=", "")
        return f"{self.task.id}__{self.granularity}__{agent}__t{self.trial}"

    def seed(self, run_seed: int) -> int:
        """This episode's own seed (see episode_seed)."""
        return episode_seed(run_seed, self.task.id, self.granularity, self.trial)


def episode_seed(run_seed: int, task_id: str, granularity: str, trial: int) -> int:
    """A seed of its own for every (task, granularity, trial), derived from the run's seed by a hash: two tasks
    that share a start state, or one task at two granularities, never replay the same random trajectory (they
    would be duplicate points, not independent trials), and the same run seed always gives the same seeds."""
    digest = hashlib.blake2b(f"{run_seed}|{task_id}|{granularity}|{trial}".encode(), digest_size=4).digest()
    return int.from_bytes(digest, "big")


def select_tasks(selector: str, tasks: list[Task], suite: list[str] | None = None, where: str = "") -> list[Task]:
    """The tasks a selector names: all, `suite` (the ids in `suite`), ids or globs, quests, category:NAME; `where`
    names where `tasks` were found, for the message when a part matches none of them."""
    chosen: list[Task] = []
    for part in [p.strip() for p in selector.split(",") if p.strip()]:
        if part == "all":
            matched = tasks
        elif part == "suite" and suite is not None:
            matched = [t for t in tasks if t.id in suite]
        elif part.startswith("category:"):
            matched = [t for t in tasks if t.category == part.split(":", 1)[1]]
        else:
            matched = [t for t in tasks if fnmatch.fnmatch(t.id, part) or t.quest == part]
        if not matched:
            among = f" among the {len(tasks)} task(s) in {where}" if where else ""
            raise BatchError(f"no task matches {part!r}{among}; see `python main.py tasks list`")
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


def replay_replies(argument: str) -> list[str]:
    """The agent replies recorded in an episode file, for `replay:PATH`."""
    if not Path(argument).is_file():
        raise BatchError(f"cannot replay {argument!r}: no such file (give replay:PATH/TO/EPISODE.h5)")
    try:
        with EpisodeReader(Path(argument)) as episode:
            return [r["raw_reply"] for r in episode.records() if r["source"] == "agent"]
    except (OSError, EpisodeFileError) as exc:
        raise BatchError(f"cannot replay {argument!r}: {exc}") from None


def make_agent(spec: str, actions: ActionSet, seed: int, paradigm: str,
               options: dict[str, Any] | None = None) -> Agent:
    """The agent `spec` names. Options: model_id, base_url, reflection_every, granularity, experience (the
    library to start from), limiter (a shared request limit), replies (a replay's replies, read already:
    on a cluster node the file may not exist)."""
    options = options or {}
    name, _, argument = spec.partition(":")
    if name == "random":
        # `seed` is the episode's own (EpisodeSpec.seed); a fixed SEED shifts it, so every episode still differs
        return RandomAgent(actions, seed=(int(argument) + seed) % 2**32 if argument else seed, paradigm=paradigm)
    if name == "random+listen":
        from core.agents.listening import ListeningRandomAgent

        return ListeningRandomAgent(actions, seed=(int(argument) + seed) % 2**32 if argument else seed,
                                    paradigm=paradigm)
    if name == "replay":
        replies = options.get("replies")
        return ReplayAgent(actions, list(replies) if replies is not None else replay_replies(argument), paradigm,
                           source=argument)
    if name == "model":
        from core.agents.models.base import ModelError, config_for
        from core.agents.models.clients import make_client
        from core.agents.vlm_agent import VLMAgent

        try:
            config = config_for(argument, model_id=options.get("model_id"), base_url=options.get("base_url"))
            client = make_client(config, options.get("limiter"))
        except ModelError as exc:
            raise BatchError(str(exc)) from None
        reflection = int(options.get("reflection_every") or 0)
        library = options.get("experience")
        if reflection and library is None:
            library = ExperienceLibrary()  # never an earlier run's lessons unless the caller names them
        return VLMAgent(client, actions, options.get("granularity", "goal_only"), paradigm,
                        reflection_every=reflection, library=library)
    raise BatchError(f"unknown agent {spec!r}; use random[:SEED], random+listen[:SEED], replay:EPISODE.h5 or "
                     "model:PRESET (claude-sonnet-4.6, gpt-5.2, gemini-3-pro, or provider:model-id)")


def plan_episodes(task_selector: str, granularity: str, agent_spec: str, trials: int,
                  backend: BackendProfile | None = None, flags: list[str] | None = None) -> list[EpisodeSpec]:
    """Every episode of a run on `backend` (the built-in world by default), in its fixed order
    (task, granularity, trial). The selector's paths (core/session/task_source.py) replace the backend's own
    task folder; its other parts choose among the tasks."""
    backend = backend or load_backend("builtin")
    if flags is None:
        flags = load_profile(backend.memory_profile_path).flags
    paths, selector = split_selector(task_selector)
    suite = None
    if "suite" in [p.strip() for p in selector.split(",")]:
        if backend.name != "builtin":
            raise BatchError("the benchmark suite is the built-in world's; choose tasks with --tasks for "
                             f"{backend.name}")
        if paths:
            raise BatchError("--tasks suite chooses among the built-in world's own tasks; leave out the paths")
        try:
            suite, _ = suite_ids()
        except ProtocolError as exc:
            raise BatchError(str(exc)) from None
    try:
        if paths:
            pool = load_tasks_for(backend, given_task_files(paths), flags)
            where = ", ".join(str(p) for p in paths)
        else:
            pool, folder = own_tasks(backend, flags)
            where = str(folder)
    except TaskSourceError as exc:
        raise BatchError(str(exc)) from None
    if not pool:
        raise BatchError(f"no tasks for the {backend.name} backend ({backend.path}): looked in {where}. Put task "
                         "files there, or give --tasks PATH|DIR (docs/backend-format.md#where-backends-are-found)")
    tasks = select_tasks(selector, pool, suite, where)
    return [EpisodeSpec(t, g, agent_spec, trial) for t in tasks for g in granularities(granularity)
            for trial in range(trials)]


def free_play_episodes(play: FreePlay, agent_spec: str, trials: int) -> list[EpisodeSpec]:
    """The unjudged episodes of a free-play run, one per trial. Free play has no instruction levels: it is
    played at goal_only, whose prompt carries the one instruction it has."""
    return [EpisodeSpec(play, GRANULARITY_NAMES["goal"], agent_spec, trial) for trial in range(trials)]


def backend_tasks(backend: BackendProfile, flags: list[str]) -> list[Task]:
    """The backend's own tasks (core/session/task_source.task_folder), each checked to name this backend."""
    try:
        return own_tasks(backend, flags)[0]
    except TaskSourceError as exc:
        raise BatchError(str(exc)) from None


def backend_reference(backend: BackendProfile) -> str:
    """How an episode finds its backend again, possibly on another machine: the name of a shipped backend
    (assets/backends/NAME.yaml, the same on every node), else the file's absolute path, so that a worker loads
    the very file the run was given (a user's file, wherever it lives), never another found by its name."""
    return backend.name if is_shipped(backend) else str(backend.path.resolve())
