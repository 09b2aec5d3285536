"""Batch runs: every (task, granularity, agent, trial) episode in its own world and evaluator processes.

Results are appended to results.jsonl as they end, infrastructure errors to errors.jsonl, so a resume
skips the results and runs everything else again (core/session/run_folder.py). A BatchControl stops
the batch cleanly from another thread (Ctrl+C). Episodes run in the local pool (threads of this
process) or on a Ray cluster (core/cluster/); both play each one with core/session/episode_job.py.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.agents.models.rate_limit import RateLimits
from core.agents.reflection import ExperienceError, ExperienceLibrary, merge_libraries, write_atomically
from core.backends.profile import BackendProfile, load_backend, with_memory_profile
from core.evaluation.profile import load_profile
from core.session import run_folder
from core.session.batch_control import BatchControl
from core.session.batch_driver import BatchStatus, EpisodeExecutor, drive
from core.session.episode_job import EXPERIENCE_DIR, EpisodeJob
from core.session.episodes import (
    GRANULARITY_NAMES,
    BatchError,
    EpisodeSpec,
    backend_reference,
    backend_tasks,
    free_play_episodes,
    granularities,
    make_agent,
    plan_episodes,
    replay_replies,
    select_tasks,
)
from core.session.free_play import FreePlay
from core.session.local_pool import LocalPool
from core.session.runner import RunOptions

# With the episode planning of core/session/episodes.py, re-exported: where callers have always found it.
__all__ = ["GRANULARITY_NAMES", "BatchError", "EpisodeSpec", "backend_reference", "backend_tasks", "check_run",
           "finish_experience", "free_play_episodes", "granularities", "make_agent", "plan_episodes",
           "replay_replies", "run_batch", "select_tasks", "starting_experience"]


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
    learned: list[ExperienceLibrary] = []
    for key in keys:
        path = out / EXPERIENCE_DIR / "episodes" / f"{key}.json"
        if path.exists():
            with contextlib.suppress(ExperienceError):  # an episode cut before its first lesson was saved
                learned.append(ExperienceLibrary.load(path))
    merged = merge_libraries(start, learned)
    target = out / EXPERIENCE_DIR / "library.json"
    write_atomically(target, merged.to_json())
    return target


def check_run(task_selector: str, granularity: str, agent_spec: str, trials: int, options: RunOptions,
              agent_options: dict[str, Any], backend: BackendProfile | None = None,
              free_play: FreePlay | None = None) -> tuple[list[EpisodeSpec], tuple[str, ...] | None]:
    """The run's episodes and a replay agent's replies; BatchError for an unknown task or agent, a missing key
    or an unreadable replay file, before anything is made (or a cluster is started). `free_play`: unjudged
    episodes instead of the tasks (a backend with no memory profile), `trials` of them."""
    backend = backend or load_backend("builtin")
    actions = backend.action_set()
    if free_play is not None:
        specs = free_play_episodes(free_play, agent_spec, trials)
    else:
        profile = load_profile(backend.memory_profile_path)
        specs = plan_episodes(task_selector, granularity, agent_spec, trials, backend, profile.flags)
    if not specs:
        raise BatchError("nothing to run: --trials must be at least 1")
    replies = tuple(replay_replies(agent_spec.partition(":")[2])) if agent_spec.startswith("replay:") else None
    agent = make_agent(agent_spec, actions, options.seed, options.paradigm,
                       {**agent_options, "granularity": specs[0].granularity, "replies": replies})
    check_sound(options.observation.audio, agent, backend)
    return specs, replies


def check_sound(mode: str, agent: Any, backend: BackendProfile) -> None:
    """Refuse, before anything starts, a run that would give an agent sound it cannot have: a game that is
    silent by its backend file, or a model that takes no audio (`--audio clip`). A sound server that fails
    once the game runs is said in the results instead (`audio: unavailable`)."""
    listens = bool(getattr(agent, "needs_audio", False))
    if mode == "none" and not listens:
        return
    asking = f"--audio {mode}" if mode != "none" else f"the {agent.name} agent"
    silent = (backend.builtin_spec.audio == "off" if backend.kind == "builtin"
              else backend.external is not None and backend.external.audio.source == "none")
    if silent:
        where = "builtin.audio: off" if backend.kind == "builtin" else "external.audio.source: none"
        raise BatchError(f"{asking} needs the game's sound, but the {backend.name} backend makes none ({where} in "
                         f"{backend.path}); turn it on there, or run without sound")
    config = getattr(getattr(agent, "client", None), "config", None)
    if mode == "clip" and config is not None:
        from core.agents.models.base import audio_refusal

        refusal = audio_refusal(config)
        if refusal is not None:
            raise BatchError(refusal)


def run_batch(task_selector: str, granularity: str, agent_spec: str, trials: int, workers: int, out: Path,
              options: RunOptions, progress: Callable[[int, int, dict[str, Any]], None],
              agent_options: dict[str, Any] | None = None, control: BatchControl | None = None, *,
              executor: EpisodeExecutor | None = None, episode_timeout_s: float | None = None, retries: int = 0,
              limits: RateLimits | None = None, status: Callable[[BatchStatus], None] | None = None,
              backend: BackendProfile | None = None, attach: str | None = None,
              memory_profile: Path | None = None, free_play: FreePlay | None = None) -> list[dict[str, Any]]:
    """Run what `out` has no result for yet; returns the rows written (results and errors) by this call.

    `backend` is the game (the built-in world by default), launched for each episode, or with `attach`
    the one already running (BackendSession.attach_to), read through the memory profile file `memory_profile`
    when given (--profile) instead of its own, or with `free_play` not read at all (unjudged episodes, no
    tasks: core/session/free_play.py); `executor` is where episodes run (default: a local
    pool of `workers` threads). An episode that ends in an
    infrastructure error is tried again up to `retries` times in this call; `limits` cap the run's model
    requests; `status` hears where the run stands (done, running, ETA) several times a second.
    Raises BatchError for bad arguments (before `out` is created) and an unusable output folder.
    """
    agent_options = agent_options or {}
    control = control or BatchControl()
    backend = with_memory_profile(backend or load_backend("builtin"), memory_profile)
    specs, replies = check_run(task_selector, granularity, agent_spec, trials, options, agent_options, backend,
                               free_play)
    try:
        run_folder.prepare(out)
    except run_folder.RunFolderError as exc:
        raise BatchError(str(exc)) from None
    reflecting = bool(agent_options.get("reflection_every")) and agent_spec.startswith("model:")
    experience = starting_experience(out, agent_options.get("experience_from")) if reflecting else None
    finished = run_folder.finished_keys(out)
    for_agent = {name: agent_options[name] for name in ("model_id", "base_url", "reflection_every")
                 if agent_options.get(name) is not None}
    jobs = [EpisodeJob(spec, options, for_agent, experience, replies, episode_timeout_s,
                       backend=backend_reference(backend), attach=attach,
                       memory_profile=str(backend.memory_profile_path) if memory_profile is not None else None)
            for spec in specs if spec.key not in finished]
    rows = drive(jobs, executor or LocalPool(workers), out, control, len(specs), retries, limits, progress, status)
    if experience is not None:
        done = run_folder.finished_keys(out)  # interrupted and failed episodes run again: not their lessons
        finish_experience(out, experience, [spec.key for spec in specs if spec.key in done])
    return rows
