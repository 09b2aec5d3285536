"""`python main.py run` on a backend with no memory profile (`memory_profile: none`): free play.

Nothing reads the game's memory yet, so nothing can judge a task: without --tasks the run records
unjudged episodes from a start state (--start, else the backend's default) for --steps steps, --trials of
them. Whatever needs ground truth (tasks, a protocol, automatic interventions, which fire on ineffective
moves measured from positions) refuses in one line naming the memory finder's command.

    python main.py run --backend ~/games/my_game.yaml --agent random --steps 50 --trials 3 --out runs/free
"""

from __future__ import annotations

import argparse

import yaml

from core.authoring.context import world_start_states
from core.backends.profile import BackendProfile, no_profile_message
from core.session.free_play import DEFAULT_STEPS, FreePlay


class FreePlayRefused(ValueError):
    """What the command asked for needs ground truth, or names a start state the game lacks; one line."""


def free_play_plan(args: argparse.Namespace, backend: BackendProfile, asked_for_tasks: bool,
                   asked_for_granularity: bool) -> FreePlay:
    """The free play the command asks for on `backend`, which has no memory profile. `asked_for_tasks`: the
    command gave --tasks or --protocol (before their defaults were filled in)."""
    finder = no_profile_message(backend)
    if asked_for_tasks:
        raise FreePlayRefused(f"{finder}. Without --tasks and --protocol, `run` plays it unjudged (free play)")
    if args.intervention != "none":
        raise FreePlayRefused(f"--intervention {args.intervention} acts on ineffective moves, which are measured "
                              f"from positions: {finder}")
    if asked_for_granularity:
        raise FreePlayRefused("--granularity chooses a task's instruction; free play has none (leave it out)")
    names = start_state_names(backend)
    start = args.start
    if start is None:
        start = _default_start(backend, names)
    elif names is not None and start not in names:
        known = ", ".join(names) or "none"
        raise FreePlayRefused(f"unknown start state {start!r} for the {backend.name} backend; it has: {known}")
    return FreePlay(start, args.budget or DEFAULT_STEPS)


def start_state_names(backend: BackendProfile) -> list[str] | None:
    """The backend's named start states: an external game's from its file, the built-in world's from its world
    file (None when that file cannot be read: the world itself then says what it knows)."""
    if backend.kind != "builtin":
        return backend.start_states or []
    try:
        return list(world_start_states(backend.resolve(backend.builtin_spec.world))[1])
    except (OSError, yaml.YAMLError, AttributeError, TypeError, ValueError):
        return None


def _default_start(backend: BackendProfile, names: list[str] | None) -> str | None:
    """The backend's default start (`default_start`), else its first; None: it has none, so the game plays
    from where it launches. The built-in world starts in its world file's first state, as it does at launch."""
    if backend.external is not None and backend.external.default_start is not None:
        return backend.external.default_start
    return names[0] if names else None


def check_not_free_play(args: argparse.Namespace) -> str | None:
    """--start only means something for free play: a task starts where its file says."""
    if args.start is not None:
        return ("--start chooses where free play starts (a backend with no memory profile); a task starts where "
                "its file says")
    return None
