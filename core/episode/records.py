"""The typed records of one episode: what a step did (StepRecord) and how the episode ended (EpisodeResult).

One definition, used by the runner that makes them, the recorder that writes them to HDF5
(docs/episode-format.md), load_episode that reads them back, and every view. Field by field:
docs/episode-model.md. Step numbers are 1-based everywhere; ticks are the game's own clock.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, cast

from core.episode.metrics import IM_EPSILON_M, INVALID_ACTION, StepFacts, continuous_facts
from core.step_sources import AGENT_SOURCES, SOURCES, Source

Position = tuple[float, float]


@dataclass(frozen=True)
class InterventionRecord:
    """An intervention carried by a step: who asked (`auto` policy or `human`), what (`text` hint,
    `push_back`, ...) and its parameters (a hint's text, the IM run that triggered it)."""

    step: int
    source: str
    kind: str
    params: Mapping[str, Any] = field(default_factory=dict[str, Any])

    def to_json(self) -> dict[str, Any]:
        return {"step": self.step, "source": self.source, "kind": self.kind, "params": dict(self.params)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> InterventionRecord:
        return cls(int(data.get("step") or 0), str(data.get("source") or "?"), str(data.get("kind") or "?"),
                   dict(data.get("params") or {}))


@dataclass(frozen=True)
class StepDecision:
    """What the agent replied for a step (absent on human and intervention steps)."""

    action: str                     # the action as executed and shown ("MoveForward", "Continuous(...)", "NoOp")
    action_params: Mapping[str, Any] = field(default_factory=dict[str, Any])
    thought: str = ""
    self_assessment: str = "missing"  # progressing | stuck | unsure | missing
    raw_reply: str = ""
    parse_error: str | None = None
    # tokens, cost_usd, model; never memory or reflection
    usage: Mapping[str, Any] = field(default_factory=dict[str, Any])
    latency_s: float = 0.0
    memory: str = ""                # the agent's short-term memory when it decided (self-reflection)
    reflection: str = ""            # a reflection made just before this decision
    lessons: tuple[str, ...] = ()   # the experience-library lessons its prompt showed

    @property
    def tokens(self) -> int:
        return int(self.usage.get("input_tokens", 0) or 0) + int(self.usage.get("output_tokens", 0) or 0)

    @property
    def cost_usd(self) -> float:
        return float(self.usage.get("cost_usd", 0.0) or 0.0)


@dataclass(frozen=True)
class StepRecord:
    """One executed step. `displacement` is what the step's own input moved the character;
    `intervention_displacement` what an automatic intervention after it added (kept apart, never
    credited to the agent). `ineffective` is the metrics' IM rule applied to this step."""

    step: int
    source: Source
    tick_before: int
    tick_after: int
    time: float                              # wall clock when the step ended (time.time())
    action: str                              # what was executed: an agent action, "HumanInput", an intervention kind
    decision: StepDecision | None = None     # the agent's reply (agent and privileged steps)
    intervention: InterventionRecord | None = None
    position_before: Position | None = None  # from the evaluator's samples; None when unknown (damaged, old file)
    position_after: Position | None = None
    displacement: float = 0.0
    intervention_displacement: float = 0.0
    movement: bool = False                   # the agent asked to move (movement action, stick past the dead zone)
    entropy_label: str = ""                  # the action as action entropy counts it
    macro: tuple[tuple[Mapping[str, Any], float], ...] = ()  # pad states and seconds executed
    side_views: Mapping[str, Any] | None = None  # {mode, game_seconds}: how the left/right views were made
    im_threshold_m: float = IM_EPSILON_M     # a move shorter than this is ineffective (continuous: calibrated)
    dialogue_open: bool = False              # a dialogue box was open when the step began
    damaged: str = ""                        # why the stored record could not be read ("" when intact)

    @property
    def by_agent(self) -> bool:
        return self.source in AGENT_SOURCES

    @property
    def latency_s(self) -> float:
        return self.decision.latency_s if self.decision is not None else 0.0

    @property
    def self_assessment(self) -> str:
        return self.decision.self_assessment if self.decision is not None else ""

    @property
    def pressed_interact(self) -> bool:
        """The step pressed A (the Interact action, or a continuous action holding the button)."""
        return self.action == "Interact" or any("A" in (pad.get("buttons") or ()) for pad, _ in self.macro)

    @property
    def facts(self) -> StepFacts:
        """This step as the metrics count it (core/episode/metrics.py)."""
        label = self.entropy_label or (self.action if self.by_agent else self.source)
        return StepFacts(action=label if self.by_agent else self.source, movement=self.movement and self.by_agent,
                         displacement=self.displacement,
                         self_assessment=(self.self_assessment or "missing") if self.by_agent else "",
                         source=self.source, external_displacement=self.intervention_displacement,
                         intervention=self.intervention is not None, step=self.step, epsilon=self.im_threshold_m,
                         dialogue=self.dialogue_open, interact=self.by_agent and self.pressed_interact,
                         position=self.position_after)

    @property
    def ineffective(self) -> bool:
        return self.facts.ineffective

    # -- storage (docs/episode-format.md): a row of /steps/table and one JSON record -----------
    def table_row(self) -> dict[str, Any]:
        return {"step": self.step, "time": self.time, "tick_before": self.tick_before, "tick_after": self.tick_after,
                "latency_s": self.latency_s, "displacement": self.displacement, "ineffective": int(self.ineffective),
                "source": self.source}

    def record_json(self) -> dict[str, Any]:
        d = self.decision
        return {
            "action": self.action, "action_params": dict(d.action_params) if d else {},
            "raw_reply": d.raw_reply if d else "", "thought": d.thought if d else "",
            "self_assessment": d.self_assessment if d else "", "parse_error": d.parse_error if d else None,
            "macro": [[dict(pad), seconds] for pad, seconds in self.macro], "usage": dict(d.usage) if d else {},
            "intervention": self.intervention.to_json() if self.intervention else None,
            "memory": d.memory if d else "", "reflection": d.reflection if d else "",
            "lessons": list(d.lessons) if d else [], "movement": self.movement, "entropy_label": self.entropy_label,
            "intervention_displacement": round(self.intervention_displacement, 4),
            "side_views": dict(self.side_views) if self.side_views is not None else None,
            "position_before": list(self.position_before) if self.position_before is not None else None,
            "position_after": list(self.position_after) if self.position_after is not None else None,
            "im_threshold_m": round(self.im_threshold_m, 5), "dialogue_open": self.dialogue_open,
        }

    def to_json(self) -> dict[str, Any]:
        """Table row and record in one flat dict (the shape the episode file and results tools use)."""
        data = {**self.record_json(), **self.table_row(),
                "position": list(self.position_after) if self.position_after is not None else None}
        if self.damaged:
            data.update(damaged=True, thought=f"({self.damaged})")
        return data

    @classmethod
    def from_stored(cls, numbers: Mapping[str, Any], record: Mapping[str, Any], damaged: str = "",
                    position_before: Position | None = None, position_after: Position | None = None,
                    dialogue_open: bool = False) -> StepRecord:
        """A step read back from a file, written by this version or an older one: files before metrics v2
        lack the entropy label and intervention displacement, files before the episode model lack the
        positions, and files before metrics v3 whether a dialogue was open (then given by the loader from
        the samples) and the move's threshold (then ε = IM_EPSILON_M, the rule they were scored by)."""
        stored = str(record.get("source") or numbers.get("source") or "agent")
        source: Source = stored if stored in SOURCES else "agent"
        by_agent = source in AGENT_SOURCES
        action = str(record.get("action") or ("NoOp" if by_agent else source))
        movement = bool(record.get("movement"))
        label = str(record.get("entropy_label") or "")
        if not label and by_agent:
            if damaged:
                label = "?"  # unknown, not an invalid reply: the reply was lost, not garbage
            elif (action == "NoOp" and record.get("parse_error")) or not record.get("action"):
                label = INVALID_ACTION
            elif action.startswith("Continuous(") and isinstance(record.get("action_params"), Mapping):
                label, movement = continuous_facts(record["action_params"])
            else:
                label = action
        decision = None
        if by_agent:
            decision = StepDecision(
                action=action, action_params=dict(record.get("action_params") or {}),
                thought=str(record.get("thought") or ""),
                self_assessment=str(record.get("self_assessment") or "missing"),
                raw_reply=str(record.get("raw_reply") or ""), parse_error=record.get("parse_error"),
                usage=dict(record.get("usage") or {}), latency_s=float(numbers.get("latency_s", 0.0)),
                memory=str(record.get("memory") or ""), reflection=str(record.get("reflection") or ""),
                lessons=tuple(str(x) for x in record.get("lessons") or ()))
        intervention = record.get("intervention")
        return cls(
            step=int(numbers.get("step", 0)), source=source,
            tick_before=int(numbers.get("tick_before", 0)), tick_after=int(numbers.get("tick_after", 0)),
            time=float(numbers.get("time", 0.0)), action=action, decision=decision,
            intervention=InterventionRecord.from_json(cast("Mapping[str, Any]", intervention))
            if isinstance(intervention, Mapping) else None,
            position_before=_position(record.get("position_before")) or position_before,
            position_after=_position(record.get("position_after")) or position_after,
            displacement=float(numbers.get("displacement", 0.0)),
            intervention_displacement=float(record.get("intervention_displacement") or 0.0),
            movement=movement and by_agent, entropy_label=label,
            macro=tuple((dict(pad), float(seconds)) for pad, seconds in record.get("macro") or ()),
            side_views=record.get("side_views"),
            im_threshold_m=IM_EPSILON_M if record.get("im_threshold_m") is None else float(record["im_threshold_m"]),
            dialogue_open=bool(record["dialogue_open"]) if "dialogue_open" in record else dialogue_open,
            damaged=damaged)


def _position(value: object) -> Position | None:
    pair = cast("Sequence[Any]", value) if isinstance(value, list | tuple) else ()  # a JSON array, or not one
    if len(pair) == 2:
        try:
            x, y = float(pair[0]), float(pair[1])
        except (TypeError, ValueError):
            return None
        return (x, y) if math.isfinite(x) and math.isfinite(y) else None
    return None


@dataclass(frozen=True)
class EpisodeResult:
    """How an episode ended. `end_reason`: success, budget, stopped (a user's Stop), interrupted (a batch cut
    short: not a result), error (infrastructure: the game or evaluator died, the agent failed for good),
    task_error (the task is broken: its success holds at its start state) or unjudged (free play on a game with
    no memory profile, played to its budget: `success` is None and `unjudged` says why)."""

    task_id: str
    success: bool | None  # None: nothing judged the episode (free play)
    steps_used: int
    end_reason: str
    success_step: int | None = None
    error: str | None = None
    failure_category_suggestion: str = ""
    metrics: Mapping[str, Any] = field(default_factory=dict[str, Any])  # EpisodeMetrics.to_json() (docs/metrics.md)
    quest: str = ""
    category: str = ""
    granularity: str = ""
    agent: str = ""
    privileged: bool = False
    reached_goal_area: bool | None = False  # None: unknown (unjudged: nothing read where the character was)
    side_views: str | None = None
    game: str = ""
    success_source: str | None = None   # whose step met the condition: agent, privileged or human
    seed: int | None = None             # the episode's own seed (derived from the run's: core/session/episodes.py)
    trajectory_digest: str = ""         # a hash of the steps' actions and end positions: equal ones are one trajectory
    undelivered_interventions: tuple[Mapping[str, Any], ...] = ()
    audio: str = "unavailable"          # on (recorded), off (the user turned it off), unavailable (the game has none)
    audio_mode: str = "none"            # what the agent was given of it: none, clip or spectrogram (`run --audio`)
    unjudged: str | None = None         # why nothing judged the episode ("no memory profile"); None: judged
    # keys written by other versions, kept as they were
    extra: Mapping[str, Any] = field(default_factory=dict[str, Any])

    def to_json(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("extra",)}
        data["metrics"] = dict(self.metrics)
        undelivered = [dict(item) for item in self.undelivered_interventions]
        del data["undelivered_interventions"]
        if undelivered:
            data["undelivered_interventions"] = undelivered
        if self.unjudged is None:  # only unjudged rows carry the key: judged rows read as they always have
            del data["unjudged"]
        return {**self.extra, **data}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> EpisodeResult:
        known = {f.name for f in fields(cls)} - {"extra"}
        values: dict[str, Any] = {name: data[name] for name in known if name in data and data[name] is not None}
        values.setdefault("task_id", "?")
        # an unjudged result's null success stays null, never a failure
        values.setdefault("success", None if "unjudged" in values else False)
        values.setdefault("steps_used", 0)
        values.setdefault("end_reason", "?")
        values["undelivered_interventions"] = tuple(values.get("undelivered_interventions") or ())
        if data.get("error") is None:
            values.pop("error", None)
        if data.get("success_step") is not None:
            values["success_step"] = int(data["success_step"])
        return cls(**values, extra={k: v for k, v in data.items() if k not in known})

    def with_error(self, note: str) -> EpisodeResult:
        from dataclasses import replace

        return replace(self, error=f"{self.error or ''} {note}".strip())


def trajectory_digest(steps: Sequence[StepRecord]) -> str:
    """A short hash of what the episode did (each step's source, action and end position to the centimetre): two
    episodes with the same digest are one trajectory, not two independent trials (the report warns)."""
    digest = hashlib.blake2b(digest_size=8)
    for step in steps:
        where = step.position_after or (float("nan"), float("nan"))
        digest.update(f"{step.source}|{step.action}|{where[0]:.2f}|{where[1]:.2f};".encode())
    return digest.hexdigest()
