"""What one episode reserves on a Ray node.

By default 2 CPUs: the game and the evaluator each keep a core busy (the harness thread is light). A backend
may also require a custom resource, so its episodes go only to nodes that advertise it: Ryujinx episodes
need a node started with `ray start --resources '{"ryujinx": 1}'`, where the emulator and the game are.

`backend_resources` is the one place that knows a backend's needs. Backends are data files
(assets/backends/NAME.yaml, docs/backend-format.md) whose format has no `resources:` mapping yet; when it
gets one, read it here instead of the table below.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

DEFAULT_CPUS_PER_EPISODE = 2.0

# Until backend files carry a `resources:` mapping: what each shipped backend needs beyond CPUs.
_BACKEND_RESOURCES: dict[str, dict[str, float]] = {
    "builtin": {},
    "minetest": {},
    "ryujinx": {"ryujinx": 1.0},
}


@dataclass(frozen=True)
class EpisodeResources:
    cpus: float = DEFAULT_CPUS_PER_EPISODE
    custom: Mapping[str, float] = field(default_factory=dict[str, float])

    def describe(self) -> str:
        extra = "".join(f", {amount:g} {name}" for name, amount in sorted(self.custom.items()))
        return f"{self.cpus:g} CPU{'' if self.cpus == 1 else 's'}{extra} per episode"


def backend_resources(backend: str) -> dict[str, float]:
    """The custom Ray resources an episode of `backend` needs (empty for the built-in world)."""
    return dict(_BACKEND_RESOURCES.get(backend, {}))


def episode_resources(backend: str = "builtin", cpus: float | None = None,
                      extra: Mapping[str, float] | None = None) -> EpisodeResources:
    """The backend's needs, with the run's --cpus-per-episode and --ray-resource NAME=AMOUNT on top."""
    custom = {**backend_resources(backend), **(extra or {})}
    return EpisodeResources(DEFAULT_CPUS_PER_EPISODE if cpus is None else cpus,
                            {name: amount for name, amount in custom.items() if amount > 0})


def parse_resource(text: str) -> tuple[str, float]:
    """`NAME=AMOUNT` (AMOUNT defaults to 1) for --ray-resource; ValueError with the reason otherwise."""
    name, _, amount = text.partition("=")
    name = name.strip()
    if not name or name in ("CPU", "GPU", "memory"):
        raise ValueError(f"--ray-resource needs a custom resource NAME[=AMOUNT], got {text!r} "
                         "(CPUs are set with --cpus-per-episode)")
    try:
        value = float(amount) if amount.strip() else 1.0
    except ValueError:
        raise ValueError(f"--ray-resource {text!r}: the amount must be a number") from None
    if value <= 0:
        raise ValueError(f"--ray-resource {text!r}: the amount must be more than 0")
    return name, value
