"""The part of Minari (0.5; annotated, but without a py.typed marker) that core/export/dataset.py uses."""

from collections.abc import Iterable
from typing import Any

import gymnasium as gym
from minari.data_collector import EpisodeBuffer

class MinariStorage:
    def update_episode_metadata(self, metadatas: Iterable[dict[str, Any]],
                                episode_indices: Iterable[int] | None = None) -> None: ...
    def update_metadata(self, metadata: dict[str, Any]) -> None: ...

class MinariDataset:
    @property
    def storage(self) -> MinariStorage: ...
    def update_dataset_from_buffer(self, buffer: list[EpisodeBuffer]) -> None: ...

def create_dataset_from_buffers(
    dataset_id: str, buffer: list[EpisodeBuffer], env: str | gym.Env[Any, Any] | None = None,
    eval_env: str | gym.Env[Any, Any] | None = None, algorithm_name: str | None = None,
    author: str | set[str] | None = None, author_email: str | set[str] | None = None,
    code_permalink: str | None = None, action_space: gym.Space[Any] | None = None,
    observation_space: gym.Space[Any] | None = None, ref_min_score: float | None = None,
    ref_max_score: float | None = None, expert_policy: Any = None, num_episodes_average_score: int = 100,
    description: str | None = None, data_format: str | None = None, requirements: list[str] | None = None, *,
    jpeg_encoding: bool = True) -> MinariDataset: ...
def load_dataset(dataset_id: str, download: bool = False) -> MinariDataset: ...
