"""Which keys a mapping in one of the project's YAML files may hold, read from its pydantic model, so that an
unknown key is told with the keys allowed there (and the nearest one, for a typo): `devise: xtest` in a
backend's `external.input` says `unknown key; external.input takes device, focus_settle_s, ... (did you mean
'device'?)`."""

from __future__ import annotations

import difflib
import types
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel

EXTRA_KEY = "Extra inputs are not permitted"  # pydantic's message for a key the model does not have


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models an annotation may hold (through Optional, unions and Annotated)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    origin = get_origin(annotation)
    if origin is Annotated:
        return _models_in(get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return [model for member in get_args(annotation) for model in _models_in(member)]
    return []


def _step(annotation: Any, part: str | int) -> Any:
    """The annotation one location part further in (a field, a union member by name, an item, a value); None
    where the location leaves what the models describe."""
    for model in _models_in(annotation):
        if isinstance(part, str) and part in model.model_fields:
            return model.model_fields[part].annotation
        if part == model.__name__:
            return model
    origin = get_origin(annotation)
    if origin is Annotated:
        return _step(get_args(annotation)[0], part)
    arguments = get_args(annotation)
    if isinstance(part, int) and isinstance(origin, type) and issubclass(origin, Sequence) and arguments:
        return arguments[0]
    if isinstance(origin, type) and issubclass(origin, Mapping) and len(arguments) == 2:
        return arguments[1]
    return None


def allowed_keys(model: type[BaseModel], location: Sequence[str | int]) -> list[str] | None:
    """The keys the mapping at `location` (in a file of `model`) may hold; None where that cannot be known."""
    current: Any = model
    for part in location:
        current = _step(current, part)
        if current is None:
            return None
    models = _models_in(current)
    if len(models) != 1:
        return None
    return [name for name, field in models[0].model_fields.items() if not field.exclude]


def unknown_key_message(model: type[BaseModel], location: Sequence[Any]) -> str:
    """What to say of the unknown key at `location`: the keys allowed beside it, and the nearest of them."""
    keys = allowed_keys(model, location[:-1]) if location else None
    if not keys:
        return "unknown key"
    parent = ".".join(str(p) for p in location[:-1] if not str(p)[:1].isupper()) or "the top level"
    near = difflib.get_close_matches(str(location[-1]), keys, n=1)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    return f"unknown key; {parent} takes {', '.join(keys)}{hint}"
