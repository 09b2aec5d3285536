"""Action sets: discrete actions as pad macros, and range-checked continuous control.

The set is data in the backend file (`actions:`), so another game brings its own; a backend that says none gets
the standard set (core/agents/standard_actions.py). See docs/actions.md.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from core.agents.standard_actions import STANDARD_DISCRETE, STANDARD_MOVEMENT
from core.game.errors import InvalidPadError
from core.game.pad import Button, PadState
from core.yaml_file import LocatedProblems, field_name


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
    min_seconds: float = Field(default=0.0333, gt=0)
    max_seconds: float = Field(default=2.0, gt=0, le=10)
    # A stick deflection up to this magnitude does nothing in the game; the metrics use it to tell a
    # move from a camera-only action (docs/metrics.md).
    dead_zone: float = Field(default=0.15, ge=0, lt=1)


class ActionSetSpec(_Model):
    """A backend's `actions:`. Without `discrete` (`actions: {}`, or no `actions:` at all) the standard discrete
    set and its movement list are used; `continuous` defaults to ContinuousSpec's values."""

    discrete: dict[str, DiscreteSpec] = Field(min_length=1)
    movement: list[str] = []
    continuous: ContinuousSpec = ContinuousSpec()

    @model_validator(mode="before")
    @classmethod
    def _standard_by_default(cls, data: object) -> object:
        if data is None:
            return {"discrete": STANDARD_DISCRETE, "movement": STANDARD_MOVEMENT}
        if not isinstance(data, dict):
            return data  # pydantic names the type that was wanted
        given = cast("dict[str, Any]", data)
        if "discrete" in given:
            return given
        return {"discrete": STANDARD_DISCRETE, "movement": given.get("movement", STANDARD_MOVEMENT), **given}

    @model_validator(mode="after")
    def _movement_known(self) -> ActionSetSpec:
        wrong = [(("movement", i), f"{name!r} is not one of the discrete actions ({', '.join(self.discrete)})")
                 for i, name in enumerate(self.movement) if name not in self.discrete]
        if wrong:
            raise LocatedProblems(wrong)
        return self


STANDARD_SPEC = ActionSetSpec.model_validate({})


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
        self._macros = {name: tuple((PadState.from_dict(step.pad), step.seconds) for step in discrete.macro)
                        for name, discrete in spec.discrete.items()}
        for name, discrete in spec.discrete.items():
            for alias in [name, *discrete.aliases]:
                self._lookup.setdefault(_key(alias), name)

    @classmethod
    def standard(cls) -> ActionSet:
        """The standard set: what a backend without `actions:` plays with."""
        return cls(STANDARD_SPEC)

    @classmethod
    def from_data(cls, data: dict[str, Any] | None) -> ActionSet:
        """An action set from `actions:` data ({} or None: the standard set). Backend files are validated by
        their loader, with file and line; this is for data that has no file of its own."""
        try:
            return cls(ActionSetSpec.model_validate(data or {}))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = field_name(tuple(first["loc"]))
            raise ActionError(f"the action set is invalid at actions.{where}: {first['msg']}") from None

    def resolve_name(self, text: str) -> str | None:
        return self._lookup.get(_key(text))

    def discrete(self, text: str) -> Action:
        name = self.resolve_name(text)
        if name is None:
            shown = text if len(text) <= 80 else text[:77] + "..."
            raise ActionError(f"unknown action {shown!r}; choose one of: {', '.join(self.names)}")
        return Action(name, self._macros[name], {})

    def continuous(self, left_stick: Any = (0.0, 0.0), right_stick: Any = (0.0, 0.0), duration: Any = 0.5,
                   buttons: Any = ()) -> Action:
        """A range-checked continuous action. Values outside their range are refused, never clamped:
        a model that writes 1.5 has misunderstood the scale, and moving it at 1.0 would hide that."""
        left = stick_value("left_stick", left_stick)
        right = stick_value("right_stick", right_stick)
        limits = self.spec.continuous
        seconds = seconds_value(duration)
        if not limits.min_seconds <= seconds <= limits.max_seconds:
            raise ActionError(f"duration {seconds:g} s is outside [{limits.min_seconds}, {limits.max_seconds}] s")
        try:
            pad = PadState(left_x=left[0], left_y=left[1], right_x=right[0], right_y=right[1],
                           buttons=frozenset(Button.parse(b) for b in button_names(buttons)))
        except InvalidPadError as exc:
            raise ActionError(str(exc)) from None
        macro: tuple[tuple[PadState, float], ...] = ((pad, seconds),)
        if pad.buttons:
            macro += ((PadState(), 1.0 / 30.0),)
        params = {"left_stick": list(left), "right_stick": list(right), "duration": seconds,
                  "buttons": sorted(b.value for b in pad.buttons)}
        return Action("Continuous", macro, params)


# Words a model uses for a stick at rest. Saying so is explicit; leaving the stick out is not the same.
NEUTRAL_WORDS = frozenset({"neutral", "center", "centre", "centered", "centred", "none", "null", "idle",
                           "released", "rest", "zero"})
_NUMBER_TEXT = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:nan|inf|infinity)", re.I)
_SECONDS_TEXT = re.compile(r"([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*(ms|milliseconds?|s|secs?|seconds?)?",
                           re.I)


def number_value(name: str, value: Any) -> float:
    """A finite number, also when written as a string ("0.5"). Booleans and words are refused."""
    if isinstance(value, str) and _NUMBER_TEXT.fullmatch(value.strip()):
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ActionError(f"{name} must be a number in [-1, 1], got {value!r}")
    if not math.isfinite(value):
        raise ActionError(f"{name} must be a finite number in [-1, 1], got {value!r}")
    return float(value)


def stick_value(name: str, value: Any) -> tuple[float, float]:
    """[x, y], (x, y), {"x": .., "y": ..} (any case), "0.5, 1" or a neutral word; each axis in [-1, 1]."""
    if value is None or (isinstance(value, str) and value.strip().lower() in NEUTRAL_WORDS):
        return 0.0, 0.0
    if isinstance(value, str):
        parts = [p for p in re.split(r"[\s,;]+", value.strip().strip("[](){}<>").strip()) if p]
        if len(parts) != 2 or not all(_NUMBER_TEXT.fullmatch(p) for p in parts):
            raise ActionError(f"{name} must be [x, y] with each in [-1, 1], got {value!r}")
        value = parts
    if isinstance(value, dict):
        axes = {str(k).strip().lower(): v for k, v in cast("dict[Any, Any]", value).items()}
        if set(axes) != {"x", "y"}:
            raise ActionError(f"{name} must have exactly the fields x and y, got {value!r}")
        value = (axes["x"], axes["y"])
    if not isinstance(value, (list, tuple)) or len(cast("Sequence[Any]", value)) != 2:
        raise ActionError(f"{name} must be [x, y] with each in [-1, 1], got {value!r}")
    out: list[float] = []
    for axis, component in zip("xy", cast("Sequence[Any]", value)):
        number = number_value(f"{name}.{axis}", component)
        if abs(number) > 1.0:
            raise ActionError(f"{name}.{axis}={number:g} is outside [-1, 1]")
        out.append(number)
    return out[0], out[1]


def seconds_value(value: Any) -> float:
    """A duration in seconds: a number, or a string such as "0.5", "0.5 s" or "500ms"."""
    scale = 1.0
    if isinstance(value, str):
        match = _SECONDS_TEXT.fullmatch(value.strip())
        if match is None:
            raise ActionError(f"duration must be a number of seconds, got {value!r}")
        value, unit = float(match.group(1)), (match.group(2) or "s").lower()
        scale = 0.001 if unit.startswith("m") else 1.0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ActionError(f"duration must be a number of seconds, got {value!r}")
    return float(value) * scale


def button_names(value: Any) -> list[str]:
    """["A", "B"], "A", "A, B", "A+B", {"A": true}, none: the names of the buttons to press."""
    if value is None:
        return []
    if isinstance(value, dict):
        mapping = cast("dict[Any, Any]", value)
        if not all(isinstance(pressed, bool) for pressed in mapping.values()):
            raise ActionError(f"buttons written as a mapping must map names to true or false, got {value!r}")
        value = [name for name, pressed in mapping.items() if pressed]
    if isinstance(value, str):
        text = value.strip()
        return [] if text.lower() in NEUTRAL_WORDS or not text else [p for p in re.split(r"[\s,+;]+", text) if p]
    if not isinstance(value, (list, tuple, set, frozenset)):
        raise ActionError(f"buttons must be a list of button names such as [\"A\"], got {value!r}")
    names: list[str] = []
    for item in cast("Iterable[Any]", value):
        if not isinstance(item, str):
            raise ActionError(f"buttons must be a list of button names such as [\"A\"], got {value!r}")
        if item.strip().lower() not in NEUTRAL_WORDS:
            names.append(item)
    return names
