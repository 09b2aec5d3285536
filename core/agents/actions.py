"""Action sets: discrete actions as pad macros, and range-checked continuous control.

The set is data in the game profile (`actions:`), so another game brings its own. See docs/actions.md.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from core.game.errors import InvalidPadError
from core.game.pad import Button, PadState


class ActionError(ValueError):
    """An action that cannot be executed; the message says why."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class MacroStep(_Model):
    pad: dict[str, Any] = {}
    seconds: float = Field(gt=0, le=10)

    @field_validator("pad")
    @classmethod
    def _valid_pad(cls, pad: dict[str, Any]) -> dict[str, Any]:
        PadState.from_dict(pad)
        return pad


class DiscreteSpec(_Model):
    aliases: list[str] = []
    macro: list[MacroStep] = Field(min_length=1)


class ContinuousSpec(_Model):
    min_seconds: float = Field(0.0333, gt=0)
    max_seconds: float = Field(2.0, gt=0, le=10)
    # A stick deflection up to this magnitude does nothing in the game; the metrics use it to tell a
    # move from a camera-only action (docs/metrics.md).
    dead_zone: float = Field(0.15, ge=0, lt=1)


class ActionSetSpec(_Model):
    discrete: dict[str, DiscreteSpec] = Field(min_length=1)
    movement: list[str] = []
    continuous: ContinuousSpec = ContinuousSpec()


def _key(text: str) -> str:
    return re.sub(r"[\s_\-]+", "", text.strip().lower())


@dataclass(frozen=True)
class Action:
    """A parsed, validated action: what the agent chose and the pad macro that carries it out."""

    name: str                               # a discrete name, or "Continuous"
    macro: tuple[tuple[PadState, float], ...]
    params: dict[str, Any]

    @property
    def seconds(self) -> float:
        return sum(seconds for _, seconds in self.macro)

    def describe(self) -> str:
        if self.name != "Continuous":
            return self.name
        p = self.params
        return (f"Continuous(left={p['left_stick']}, right={p['right_stick']}, {p['duration']}s"
                + (f", buttons={p['buttons']})" if p["buttons"] else ")"))


class ActionSet:
    def __init__(self, spec: ActionSetSpec) -> None:
        self.spec = spec
        self.names = list(spec.discrete)
        self.movement = set(spec.movement)
        self._lookup: dict[str, str] = {}
        for name, discrete in spec.discrete.items():
            for alias in [name, *discrete.aliases]:
                self._lookup.setdefault(_key(alias), name)

    @classmethod
    def from_profile_data(cls, data: dict[str, Any]) -> ActionSet:
        try:
            return cls(ActionSetSpec.model_validate(data))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ActionError(f"the profile's action set is invalid at actions.{where}: {first['msg']}") from None

    def resolve_name(self, text: str) -> str | None:
        return self._lookup.get(_key(text))

    def discrete(self, text: str) -> Action:
        name = self.resolve_name(text)
        if name is None:
            raise ActionError(f"unknown action {text!r}; choose one of: {', '.join(self.names)}")
        macro = tuple((PadState.from_dict(step.pad), step.seconds) for step in self.spec.discrete[name].macro)
        return Action(name, macro, {})

    def continuous(self, left_stick: Any = (0.0, 0.0), right_stick: Any = (0.0, 0.0), duration: Any = 0.5,
                   buttons: Any = ()) -> Action:
        left = _stick("left_stick", left_stick)
        right = _stick("right_stick", right_stick)
        limits = self.spec.continuous
        if isinstance(duration, bool) or not isinstance(duration, (int, float)) or not math.isfinite(duration):
            raise ActionError(f"duration must be a number of seconds, got {duration!r}")
        if not limits.min_seconds <= duration <= limits.max_seconds:
            raise ActionError(f"duration {duration} s is outside [{limits.min_seconds}, {limits.max_seconds}] s")
        if isinstance(buttons, str):
            buttons = [buttons]
        try:
            pad = PadState(left_x=left[0], left_y=left[1], right_x=right[0], right_y=right[1],
                           buttons=frozenset(Button.parse(str(b)) for b in buttons))
        except InvalidPadError as exc:
            raise ActionError(str(exc)) from None
        macro: tuple[tuple[PadState, float], ...] = ((pad, float(duration)),)
        if pad.buttons:
            macro += ((PadState(), 1.0 / 30.0),)
        params = {"left_stick": list(left), "right_stick": list(right), "duration": float(duration),
                  "buttons": sorted(b.value for b in pad.buttons)}
        return Action("Continuous", macro, params)


def _stick(name: str, value: Any) -> tuple[float, float]:
    if isinstance(value, dict):
        value = (value.get("x", 0.0), value.get("y", 0.0))
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise ActionError(f"{name} must be [x, y] with each in [-1, 1], got {value!r}")
    out = []
    for axis, component in zip("xy", value):
        if isinstance(component, bool) or not isinstance(component, (int, float)) or not math.isfinite(component):
            raise ActionError(f"{name}.{axis} must be a number in [-1, 1], got {component!r}")
        if abs(component) > 1.0:
            raise ActionError(f"{name}.{axis}={component} is outside [-1, 1]")
        out.append(float(component))
    return out[0], out[1]
