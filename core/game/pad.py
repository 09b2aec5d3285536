"""PadState: one instant of virtual-gamepad input, validated so values can never wrap.

vgamepad passes stick floats straight to the driver, where 1.01 wraps round to full
left (see FACTS.md). Every value is therefore checked here, once, before it reaches a
backend: finite values slightly outside [-1, 1] are clamped, NaN and infinities are
rejected with a message naming the field.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, cast

from core.game.errors import InvalidPadError

PAD_FORMAT_VERSION = 1

# Values further than this outside [-1, 1] are treated as a caller bug, not rounding noise.
_CLAMP_TOLERANCE = 0.5


class Button(str, Enum):
    A = "A"
    B = "B"
    X = "X"
    Y = "Y"
    L = "L"
    R = "R"
    ZL = "ZL"
    ZR = "ZR"
    PLUS = "PLUS"
    MINUS = "MINUS"
    DPAD_UP = "DPAD_UP"
    DPAD_DOWN = "DPAD_DOWN"
    DPAD_LEFT = "DPAD_LEFT"
    DPAD_RIGHT = "DPAD_RIGHT"

    @classmethod
    def parse(cls, name: str) -> Button:
        key = name.strip().upper().replace("-", "_").replace(" ", "_")
        aliases = {"+": "PLUS", "-": "MINUS", "UP": "DPAD_UP", "DOWN": "DPAD_DOWN",
                   "LEFT": "DPAD_LEFT", "RIGHT": "DPAD_RIGHT"}
        key = aliases.get(key, key)
        try:
            return cls(key)
        except ValueError:
            valid = ", ".join(b.value for b in cls)
            raise InvalidPadError(f"unknown button {name!r}; valid buttons are: {valid}") from None


def _checked_axis(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidPadError(f"{name} must be a number in [-1, 1], got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise InvalidPadError(f"{name} must be a finite number in [-1, 1], got {number!r}")
    if abs(number) > 1.0 + _CLAMP_TOLERANCE:
        raise InvalidPadError(
            f"{name}={number} is far outside [-1, 1]; stick values are fractions of full deflection"
        )
    return max(-1.0, min(1.0, number))


@dataclass(frozen=True)
class PadState:
    """Sticks in [-1, 1] (x right, y up) and the set of held buttons."""

    left_x: float = 0.0
    left_y: float = 0.0
    right_x: float = 0.0
    right_y: float = 0.0
    buttons: frozenset[Button] = field(default_factory=frozenset[Button])

    def __post_init__(self) -> None:
        for axis in ("left_x", "left_y", "right_x", "right_y"):
            object.__setattr__(self, axis, _checked_axis(axis, getattr(self, axis)))
        object.__setattr__(self, "buttons", frozenset(_as_buttons(self.buttons)))

    @classmethod
    def neutral(cls) -> PadState:
        return cls()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PadState:
        if not isinstance(data, Mapping):  # pyright: ignore[reportUnnecessaryIsInstance]  # callers may pass any type
            raise InvalidPadError(f"a pad state must be a mapping, got {type(data).__name__}")
        known = {"left_x", "left_y", "right_x", "right_y", "buttons"}
        unknown = set(data) - known
        if unknown:
            raise InvalidPadError(f"unknown pad fields {sorted(unknown)}; expected {sorted(known)}")
        return cls(
            left_x=data.get("left_x", 0.0),
            left_y=data.get("left_y", 0.0),
            right_x=data.get("right_x", 0.0),
            right_y=data.get("right_y", 0.0),
            buttons=frozenset(_as_buttons(data.get("buttons", ()))),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "left_x": self.left_x,
            "left_y": self.left_y,
            "right_x": self.right_x,
            "right_y": self.right_y,
            "buttons": sorted(b.value for b in self.buttons),
        }

    def pressed(self, button: Button) -> bool:
        return button in self.buttons


def _as_buttons(items: object) -> Iterable[Button]:
    if isinstance(items, (str, bytes)) or not isinstance(items, Iterable):
        raise InvalidPadError(f"buttons must be a list of button names, got {items!r}")
    for item in cast("Iterable[object]", items):
        if isinstance(item, Button):
            yield item
        elif isinstance(item, str):
            yield Button.parse(item)
        else:
            raise InvalidPadError(f"a button must be a name such as 'A', got {item!r}")
