"""Where the project's data lives on disk."""

from __future__ import annotations

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
ASSETS_DIR = PROJECT_ROOT / "assets"
WORLDS_DIR = ASSETS_DIR / "worlds"
PROFILES_DIR = ASSETS_DIR / "profiles"
TASKS_DIR = ASSETS_DIR / "tasks"
RECORDINGS_DIR = PROJECT_ROOT / "recordings"
DEFAULT_WORLD = WORLDS_DIR / "town" / "world.yaml"
