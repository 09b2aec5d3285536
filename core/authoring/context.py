"""What a task is checked against: the profile's flag names and the world's named start states.

The world file is read as plain YAML, as `tasks validate` does: only the world process may import
core.world, and the names and poses of its start states are all authoring needs from it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from core.evaluation.client import BUILTIN_PROFILE
from core.evaluation.profile import load_profile
from core.paths import DEFAULT_WORLD


def profile_flags(profile: Path = BUILTIN_PROFILE) -> list[str]:
    """The game's flag names in bit order (bit i is the i-th name)."""
    return list(load_profile(profile).flags)


def world_start_states(world_file: Path = DEFAULT_WORLD) -> tuple[str, dict[str, dict[str, Any]]]:
    """The world's name and its named start states (name -> {pos, facing, ...}) as written in its file."""
    data = yaml.safe_load(Path(world_file).read_text(encoding="utf-8"))
    return str(data.get("name", "")), dict(data.get("start_states") or {})
