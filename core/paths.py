"""Where the project's data lives on disk."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
ASSETS_DIR = PROJECT_ROOT / "assets"
WORLDS_DIR = ASSETS_DIR / "worlds"
PROFILES_DIR = ASSETS_DIR / "profiles"
TASKS_DIR = ASSETS_DIR / "tasks"
# Where the studio writes its episodes; POKEGYM_RECORDINGS moves them (scripts and tests use a scratch folder).
RECORDINGS_DIR = Path(os.environ.get("POKEGYM_RECORDINGS") or PROJECT_ROOT / "recordings")
DEFAULT_WORLD = WORLDS_DIR / "town" / "world.yaml"


def user_data_dir() -> Path:
    """The user's own PokeGym folder: POKEGYM_HOME, else $XDG_DATA_HOME/pokegym (~/.local/share/pokegym). Read
    when asked, so a test (or a user's shell) that sets the variable later is heeded."""
    chosen = os.environ.get("POKEGYM_HOME")
    if chosen:
        return Path(chosen).expanduser()
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "pokegym"


def user_tasks_dir() -> Path:
    """Where tasks a user authors are saved by default (never into the suite's assets/tasks/)."""
    return user_data_dir() / "tasks"


def user_backends_dir() -> Path:
    """Where a user's own backend files are found by name (`--backend my_game`, a task's `backend: my_game`),
    after the project's assets/backends/: POKEGYM_HOME/backends (docs/backend-format.md#where-backends-are-found)."""
    return user_data_dir() / "backends"


def user_cache_dir() -> Path:
    """What PokeGym keeps only to start faster (the built-in worlds' sound banks), safe to delete at any time:
    POKEGYM_CACHE_DIR, else $XDG_CACHE_HOME/pokegym (~/.cache/pokegym)."""
    chosen = os.environ.get("POKEGYM_CACHE_DIR")
    if chosen:
        return Path(chosen).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "pokegym"


def user_log_dir() -> Path:
    """Where the studio writes its log: POKEGYM_LOG_DIR, else $XDG_STATE_HOME/pokegym (~/.local/state/pokegym)."""
    chosen = os.environ.get("POKEGYM_LOG_DIR")
    if chosen:
        return Path(chosen).expanduser()
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "pokegym"
