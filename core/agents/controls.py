"""Reading continuous-control fields however a model spells them, and refusing what cannot be read.

Accepted spellings (case, `_`, `-` and spaces do not matter):
  sticks     left_stick / leftStick / left / ls / left_joystick ..., the same for right (also camera_stick);
             or flat: left_stick_x + left_stick_y, left_x + left_y, lx + ly (both axes, or it is refused);
             or grouped: {"sticks": {"left": ..., "right": ...}}
  duration   duration, duration_s, seconds, hold_seconds ...; duration_ms / milliseconds in ms
  buttons    buttons, button, press
Values are read by `core.agents.actions` (numbers as strings, {"X": .., "Y": ..}, "0.5, 1", "neutral").

Refused, never guessed: a field that looks like a control but is not one of these (`camera`, `move`,
`x`, `stick_angle`); the same stick given twice with different values; one flat axis without the other;
and a continuous action that names no stick and no button at all (it would silently stand still).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from typing import Any, cast

from core.agents.actions import ActionError, seconds_value, stick_value

_LEFT = {"leftstick", "left", "lstick", "ls", "leftjoystick", "leftanalog", "leftthumbstick", "leftthumb",
         "movestick", "movementstick", "leftaxis", "leftaxes"}
_RIGHT = {"rightstick", "right", "rstick", "rs", "rightjoystick", "rightanalog", "rightthumbstick", "rightthumb",
          "camerastick", "lookstick", "rightaxis", "rightaxes"}
_FLAT = {**{f"{p}{axis}": ("left", i) for p in (*_LEFT, "l") for i, axis in enumerate("xy")},
         **{f"{p}{axis}": ("right", i) for p in (*_RIGHT, "r") for i, axis in enumerate("xy")}}
_SECONDS = {"duration", "durations", "durationsec", "durationsecs", "durationseconds", "seconds", "secs",
            "holdseconds", "holdsecs", "holdtime", "holdduration"}
_MILLISECONDS = {"durationms", "milliseconds", "holdms", "durationmilliseconds"}
_BUTTONS = {"buttons", "button", "press", "presses", "pressbuttons", "buttonspressed"}
_GROUPS = {"sticks", "stick", "joysticks", "analog", "gamepad", "pad", "controls", "controller", "input"}
_TYPE = {"type", "kind", "mode"}
# Names that say "I am a control" without saying which one: refused rather than dropped.
_CONTROL_LIKE = re.compile(r"stick|joystick|analog|thumb|axis|axes|^(?:camera|move|movement|look|vector|x|y|dx|dy|"
                           r"angle|speed|magnitude)$")


@functools.lru_cache(maxsize=4096)
def _normalized_text(key: str) -> str:
    return re.sub(r"[\s_\-]+", "", key.lower())


def normalized(key: Any) -> str:
    """A field name without case, spaces, `_` or `-`: leftStick, left_stick and "Left Stick" are one name."""
    return _normalized_text(str(key))


def has_controls(fields: Mapping[str, Any]) -> bool:
    """Whether an object carries continuous-control fields (a stick, a button, or type "continuous")."""
    for key, value in fields.items():
        name = normalized(key)
        if name in _LEFT or name in _RIGHT or name in _FLAT or name in _BUTTONS:
            return True
        if name in _TYPE and isinstance(value, str) and normalized(value) == "continuous":
            return True
        if name in _GROUPS and isinstance(value, Mapping) and has_controls(cast("Mapping[str, Any]", value)):
            return True
    return False


def read_controls(fields: Mapping[str, Any]) -> dict[str, Any]:
    """Keyword arguments for ActionSet.continuous, or ActionError saying what could not be read."""
    sticks: dict[str, list[tuple[str, Any]]] = {"left": [], "right": []}
    flat: dict[str, dict[int, tuple[str, Any]]] = {"left": {}, "right": {}}
    found: dict[str, list[tuple[str, Any]]] = {"seconds": [], "milliseconds": [], "buttons": []}
    _collect(fields, sticks, flat, found, depth=0)
    for side, axes in flat.items():
        if axes:
            if len(axes) != 2:
                given, _ = next(iter(axes.values()))
                raise ActionError(f"{given} is given without the other axis; give both x and y of the {side} stick")
            (x_name, x), (_, y) = axes[0], axes[1]
            sticks[side].append((x_name.rstrip("xX_- ") + "_x/_y", [x, y]))
    if not sticks["left"] and not sticks["right"] and not found["buttons"]:
        raise ActionError("the continuous action gives no left_stick, right_stick or buttons; say what to press "
                          "(left_stick [0, 0] to stand still)")
    kwargs: dict[str, Any] = {}
    for side in ("left", "right"):
        if sticks[side]:
            kwargs[f"{side}_stick"] = _single(f"the {side} stick", sticks[side], stick_value)
    if found["buttons"]:
        kwargs["buttons"] = _single("buttons", found["buttons"], None)
    durations = found["seconds"] + [(n, _milliseconds(n, v)) for n, v in found["milliseconds"]]
    if durations:
        kwargs["duration"] = _single("the duration", durations, lambda _, value: seconds_value(value))
    return kwargs


def _collect(fields: Mapping[str, Any], sticks: dict[str, list[tuple[str, Any]]],
             flat: dict[str, dict[int, tuple[str, Any]]], found: dict[str, list[tuple[str, Any]]],
             depth: int) -> None:
    for key, value in fields.items():
        name = normalized(key)
        if name in _LEFT:
            sticks["left"].append((str(key), value))
        elif name in _RIGHT:
            sticks["right"].append((str(key), value))
        elif name in _FLAT:
            side, axis = _FLAT[name]
            if axis in flat[side] and flat[side][axis][1] != value:
                raise ActionError(f"the {side} stick's {'xy'[axis]} axis is given twice with different values")
            flat[side][axis] = (str(key), value)
        elif name in _SECONDS:
            found["seconds"].append((str(key), value))
        elif name in _MILLISECONDS:
            found["milliseconds"].append((str(key), value))
        elif name in _BUTTONS:
            found["buttons"].append((str(key), value))
        elif name in _GROUPS and isinstance(value, Mapping) and depth == 0:
            _collect(cast("Mapping[str, Any]", value), sticks, flat, found, depth + 1)
        elif _CONTROL_LIKE.search(name):
            raise ActionError(f"the control field {key!r} is not one this game reads; give left_stick and "
                              "right_stick as [x, y] in [-1, 1], duration in seconds and buttons")


def _milliseconds(name: str, value: Any) -> Any:
    if isinstance(value, str) and re.fullmatch(r"\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)\s*", value):
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ActionError(f"{name} must be a number of milliseconds, got {value!r}")
    return value / 1000.0


def _single(what: str, given: list[tuple[str, Any]], read: Callable[[str, Any], object] | None) -> Any:
    """The one value given for a control; the same control given twice must agree."""
    first_name, first = given[0]
    for name, value in given[1:]:
        same = read(name, value) == read(first_name, first) if read else value == first
        if not same:
            raise ActionError(f"{what} is given twice with different values ({first_name}={first!r}, "
                              f"{name}={value!r}); give it once")
    return first
