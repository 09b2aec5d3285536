"""What an episode's file holds besides its steps: its metadata, the image sets it records, its recorder, and
each step's sound taken from the game."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np

from core.agents.base import Agent
from core.agents.observe import ObservationOptions
from core.audio.clip import AudioClip
from core.episode.metrics import GoalArea
from core.episode.model import Episode
from core.episode.recorder import EpisodeRecorder
from core.evaluation.stepping import current_tick
from core.evaluation.tasks import Task
from core.game.audio_ring import AudioUnavailableError
from core.game.connection import Capability, GameConnection, audio_state
from core.recording.writer import EpisodeWriter
from core.session.free_play import UNJUDGED_WHY, FreePlay
from core.session.run_options import RunOptions

log = logging.getLogger(__name__)


def versions() -> dict[str, str]:
    import importlib.metadata
    import platform

    versions = {"python": platform.python_version(), "episode_format": "1"}
    for package in ("pokegym-studio", "panda3d", "h5py", "numpy"):
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            versions[package] = "not installed"
    return versions


def episode_metadata(task: Task | FreePlay, options: RunOptions, agent: Agent, game: GameConnection,
                     goal: GoalArea | None, judged: bool) -> dict[str, Any]:
    """The episode's metadata, as its file and results keep it."""
    metadata: dict[str, Any] = {
        "task_id": task.id, "quest": task.quest, "category": task.category, "granularity": options.granularity,
        "agent": agent.name, "agent_config": agent.describe(), "privileged": options.privileged,
        "start_state": task.start_for_reset(), "step_budget": options.step_budget or task.step_budget,
        "instruction": task.instruction(options.granularity), "options": options.to_json(), "game": game.info.name,
        "tick_hz": game.info.tick_hz,  # turns recorded ticks into seconds (clips)
        "position_units": options.position_units,  # what x and y are in, for plots and scale bars (None: unsaid)
        # on: recorded in /audio; off: the user turned the game's sound off; unavailable: it has none
        "audio": audio_state(game.info),
        # Where the task ends, for the Execution Failure rule; never part of an observation.
        "goal_area": goal.to_json() if goal is not None else None,
        # False: free play with nothing reading the game's memory: no positions, no success
        "judged": judged}
    if not judged:
        metadata["unjudged"] = UNJUDGED_WHY
    metadata["versions"] = versions()
    outline = getattr(game, "map_outline", None)
    if outline is not None and Capability.MAP_OUTLINE in game.info.capabilities:
        # Footprints for the replay view's map; geometry only, and never part of an observation.
        metadata["map_outline"] = [{"kind": kind, "points": points.round(2).tolist()} for kind, points in outline()]
    return metadata


def image_sets(observation: ObservationOptions) -> list[str]:
    sets = ["current"] + (["previous"] if observation.previous_frame else [])
    # "hearing": the spectrogram picture the agent was shown (`--audio spectrogram`); with `--audio clip` what
    # it was given is exactly the previous step's /audio
    return sets + (["left", "right"] if observation.side_views else []) + (
        ["hearing"] if observation.audio == "spectrogram" else [])


def open_recorder(episode: Episode, game: GameConnection, options: RunOptions, path: Path) -> EpisodeRecorder:
    """The episode's file, written as the episode grows (core/episode/recorder.py)."""
    shape = game.latest_frame().pixels.shape  # once per episode, after the reset
    width = min(shape[1], options.observation.max_width)
    height = round(shape[0] * width / shape[1])
    writer = EpisodeWriter(path, episode.metadata, (height, width, 3), image_sets=tuple(episode.image_sets),
                           continuous_frames=options.frame_every_ticks > 0, audio=episode.audio_format)
    return EpisodeRecorder(episode, writer)


def step_sound(episode: Episode, game: GameConnection, tick_before: int,
               step: int) -> tuple[AudioClip, int, int] | None:
    """What step `step` played: the ticks after its tick_before up to where the game is now (the step's end, or
    the end of the push an intervention made after it), with those ticks. None when the episode records no
    sound, or the game no longer holds those ticks (a warning; the step is recorded without sound)."""
    layout = episode.audio_format
    if layout is None:
        return None
    last = current_tick(game)
    first = tick_before + 1
    if last < first:  # the step took no game time
        return AudioClip(layout.rate, np.zeros((0, layout.channels), np.int16)), first, last
    try:
        return game.audio_ticks(first, last), first, last
    except AudioUnavailableError as exc:
        log.warning("step %d is recorded without its sound: %s", step, exc)
        return None
