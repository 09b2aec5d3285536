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
