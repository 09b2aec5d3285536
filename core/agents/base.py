"""The agent interface: an Observation in, a Decision out. Nothing else crosses."""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from core.agents.actions import Action, ActionSet
from core.agents.observation import Observation
from core.agents.parser import SELF_ASSESSMENTS, parse_reply


@dataclass(frozen=True)
class Decision:
    action: Action | None          # None: the reply could not be turned into an action (recorded as a no-op)
    thought: str
    self_assessment: str           # one of SELF_ASSESSMENTS; "missing" when the reply gave none readable
    raw_reply: str
    parse_error: str | None = None
    usage: dict[str, Any] = field(default_factory=dict[str, Any])
    latency_s: float = 0.0
    memory: str = ""                  # the agent's short-term memory when it decided (self-reflection)
    reflection: str = ""              # a reflection made just before this decision, if any
    lessons: tuple[str, ...] = ()     # the experience-library lessons its prompt showed

    def __post_init__(self) -> None:
        if self.self_assessment not in SELF_ASSESSMENTS:
            raise ValueError(f"self_assessment must be one of {SELF_ASSESSMENTS}, got {self.self_assessment!r}")


class Agent(Protocol):
    name: str

    def decide(self, observation: Observation) -> Decision: ...

    def describe(self) -> dict[str, Any]:
        """Configuration for the episode file, without secrets."""
        ...


def decision_from_reply(reply: str, actions: ActionSet, paradigm: str, started: float,
                        usage: dict[str, Any] | None = None) -> Decision:
    parsed = parse_reply(reply, actions, paradigm)
    return Decision(parsed.action, parsed.thought, parsed.self_assessment, reply, parsed.error, usage or {},
                    time.perf_counter() - started)


class RandomAgent:
    """Uniformly random actions, written as a model would write them (so the parser is exercised)."""

    name = "random"

    def __init__(self, actions: ActionSet, seed: int = 0, paradigm: str = "discrete") -> None:
        self.actions = actions
        self.seed = seed
        self.paradigm = paradigm
        self._rng = random.Random(seed)

    def decide(self, observation: Observation) -> Decision:
        started = time.perf_counter()
        if self.paradigm == "continuous":
            action: Any = {"type": "continuous", "left_stick": [round(self._rng.uniform(-1, 1), 3), 1.0],
                           "right_stick": [round(self._rng.uniform(-1, 1), 3), 0.0],
                           "duration": round(self._rng.uniform(0.1, 1.0), 3)}
        else:
            action = self._rng.choice(self.actions.names)
        reply = json.dumps({"thought": f"random choice at step {observation.step}",
                            "self_assessment": "unsure", "action": action})
        return decision_from_reply(reply, self.actions, self.paradigm, started)

    def describe(self) -> dict[str, Any]:
        return {"agent": self.name, "seed": self.seed, "paradigm": self.paradigm}


class ReplayAgent:
    """Replays the raw replies of a recorded episode, step by step (checks determinism)."""

    name = "replay"

    def __init__(self, actions: ActionSet, replies: list[str], paradigm: str = "discrete",
                 source: str = "") -> None:
        self.actions = actions
        self.replies = replies
        self.paradigm = paradigm
        self.source = source
        self._next = 0

    def decide(self, observation: Observation) -> Decision:
        started = time.perf_counter()
        if self._next >= len(self.replies):
            return decision_from_reply('{"action": "Wait", "thought": "the recording has ended"}', self.actions,
                                       self.paradigm, started)
        reply = self.replies[self._next]
        self._next += 1
        return decision_from_reply(reply, self.actions, self.paradigm, started)

    def describe(self) -> dict[str, Any]:
        return {"agent": self.name, "source": self.source, "paradigm": self.paradigm}
