from dataclasses import dataclass
from typing import Any

@dataclass
class EpisodeBuffer:
    # Minari annotates the step data as lists (or dicts or tuples of them); numpy arrays work as well.
    id: int | None = None
    seed: int | None = None
    options: dict[str, Any] | None = None
    observations: Any = None
    actions: Any = None
    rewards: Any = ...
    terminations: Any = ...
    truncations: Any = ...
    infos: dict[str, Any] | None = None
