"""The project's YAML files (tasks, memory profiles, backends, world files), read safely and explained in one
voice: every problem is named by file and line, `path:LINE: field: what is wrong`.

Each loader keeps its own error class (TaskFileError, ProfileError, ...); this module finds the lines.
YAML is always loaded with the safe loader: a file can hold data, never objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import yaml
from pydantic import BaseModel, ValidationError

from core.yaml_keys import EXTRA_KEY, unknown_key_message

MAX_PROBLEMS = 16
Location = tuple[str | int, ...]


class LocatedProblems(ValueError):
    """Raised by a whole-file check (a model validator) with each problem's own field, so that it is reported
    at that field's line rather than at the model's."""

    def __init__(self, found: Sequence[tuple[Location, str]]) -> None:
        super().__init__("; ".join(f"{'.'.join(str(p) for p in loc)}: {msg}" for loc, msg in found))
        self.problems = list(found)


# libyaml's safe loader where PyYAML was built with it: about 8 times faster than the pure-Python one, which held
# the GIL for a second per episode start-up when dozens of episodes started at once. Same safety, same data.
_FAST_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse_yaml(text: str, path: Path | str) -> tuple[Any, yaml.Node | None]:
    """The data in `text` and its node tree (for line numbers). Raises ValueError, "path:LINE: not valid YAML:
    ...", naming the line where the broken construct began (and where it was noticed, when that differs)."""
    try:
        return _parse(text, _FAST_LOADER)
    except yaml.YAMLError:
        pass  # told in the pure-Python loader's words (the same whether libyaml is there or not)
    try:
        return _parse(text, yaml.SafeLoader)
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem_mark", None)
        context = getattr(exc, "context_mark", None) or problem
        where = f"{path}:{context.line + 1}" if context is not None else str(path)
        noticed = f" (noticed at line {problem.line + 1})" if problem is not None and problem is not context else ""
        raise ValueError(f"{where}: not valid YAML: {getattr(exc, 'problem', exc)}{noticed}") from None


def _parse(text: str, loader: type[yaml.SafeLoader]) -> tuple[Any, yaml.Node | None]:
    data = yaml.load(text, Loader=loader)  # a safe loader: SafeLoader or libyaml's CSafeLoader
    root = cast("yaml.Node | None", yaml.compose(text, Loader=loader))  # pyright: ignore[reportUnknownMemberType]  # typeshed: compose's stream is unannotated
    return data, root


def read_yaml(path: Path, what: str = "file") -> tuple[Any, yaml.Node | None]:
    """parse_yaml of a file. Raises ValueError for an unreadable file ("cannot read `what` PATH: why") or bad
    YAML, with the file's name."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return parse_yaml(text, path)


def line_of(node: yaml.Node | None, location: Sequence[Any]) -> int | None:
    """The 1-based line of the YAML node at a pydantic error location, as deep as it resolves. Path elements
    pydantic adds (a union member's or a validator's name) have no node and are passed over."""
    line = node.start_mark.line + 1 if node is not None else None
    for key in location:
        if isinstance(node, yaml.MappingNode):
            match: yaml.Node | None = next((v for k, v in node.value if getattr(k, "value", None) == str(key)), None)
            if match is None:
                continue
            node = match
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            node = cast(yaml.Node, node.value[key])  # a sequence node's items are nodes
        else:
            continue
        line = node.start_mark.line + 1
    return line


def field_name(location: Sequence[Any]) -> str:
    """A pydantic location as the file's own dotted path (union members' capitalised names and the `[key]` of a
    mapping's key left out)."""
    parts = [str(part) for part in location if not str(part)[:1].isupper() and part != "[key]"]
    return ".".join(parts) or "(top level)"


def problems(path: Path | str, root: yaml.Node | None, exc: ValidationError, limit: int = MAX_PROBLEMS,
             model: type[BaseModel] | None = None) -> list[tuple[int | None, str, str]]:
    """(line, field, message) of each validation error, the same message on the same line told once. With the
    file's `model`, an unknown key is told with the keys its mapping takes (core/yaml_keys.py)."""
    found: list[tuple[int | None, str, str]] = []
    seen: set[tuple[int | None, str]] = set()
    for location, message in _located(exc):
        if model is not None and message == EXTRA_KEY:
            message = unknown_key_message(model, location)
        line = line_of(root, location)
        if (line, message) in seen:
            continue
        seen.add((line, message))
        found.append((line, field_name(location), message))
    return found[:limit]


def _located(exc: ValidationError) -> list[tuple[tuple[Any, ...], str]]:
    """Pydantic's errors, a LocatedProblems unpacked into the fields it is about."""
    found: list[tuple[tuple[Any, ...], str]] = []
    for error in exc.errors():
        cause = error.get("ctx", {}).get("error")
        if isinstance(cause, LocatedProblems):
            found.extend(((*error["loc"], *location), message) for location, message in cause.problems)
        else:
            found.append((tuple(error["loc"]), str(error["msg"])))
    return found


def explain(path: Path | str, root: yaml.Node | None, exc: ValidationError, what: str,
            model: type[BaseModel] | None = None) -> str:
    """The whole message for a file that is valid YAML but not a valid `what` ("task (format 1)", ...); with the
    file's `model`, unknown keys are told with the keys allowed there."""
    lines = [f"{path} is not a valid {what}:"]
    lines += [f"  {path}:{line if line is not None else '?'}: {field}: {message}"
              for line, field, message in problems(path, root, exc, model=model)]
    return "\n".join(lines)
