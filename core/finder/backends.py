"""Which game the finder drives: a backend name or file, turned into a launcher.

Today `builtin` (the built-in world, started in lockstep with the software renderer) is the one
backend that can be launched and restarted from here. Backend files (YAML, from the external-
games work: Minetest under Xvfb, Ryujinx) will plug in through the same `GameLauncher`: a
callable returning a fresh connection with `pid` and `hold(pad, seconds)`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core.finder.motion import Closable, GameLauncher, MotionPlan


class BackendError(ValueError):
    """A backend that cannot be used from here; the message says why and what to use instead."""


@dataclass(frozen=True)
class Backend:
    name: str
    game: str
    game_version: str | None
    launch: GameLauncher
    plan: MotionPlan
    start_state: str | None = None


def _builtin_launcher(start_state: str | None) -> Callable[[], Closable]:
    def launch() -> Closable:
        from core.game.builtin import BuiltinWorld

        world = BuiltinWorld.launch(renderer="software")
        if start_state:
            world.reset(start_state)
        return world

    return launch


def builtin_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"pokegym-studio {version('pokegym-studio')}"
    except PackageNotFoundError:
        return "pokegym-studio (source tree)"


def resolve(spec: str, start_state: str | None = "plaza") -> Backend:
    if spec == "builtin":
        return Backend("builtin", "Harborvale (the built-in PokeGym world)", builtin_version(),
                       _builtin_launcher(start_state), MotionPlan(), start_state)
    path = Path(spec)
    if path.suffix in (".yaml", ".yml"):
        if not path.exists():
            raise BackendError(f"backend file {path} does not exist")
        raise BackendError(f"{path}: launching external games from a backend file is not available in this build "
                           "yet (it arrives with external-game support: Minetest under Xvfb, Ryujinx). Use "
                           "--backend builtin, or attach to a running game with --pid for value scans")
    raise BackendError(f"unknown backend {spec!r}: use 'builtin' or a backend file (.yaml)")
