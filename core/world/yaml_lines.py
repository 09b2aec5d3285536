"""Where in a YAML file a validation error is: the line of the node at a pydantic error location."""

from __future__ import annotations

from collections.abc import Sequence

import yaml

Location = tuple[str | int, ...]


class LocatedProblems(ValueError):
    """Problems found by a whole-file check, each with the location of the field it is about."""

    def __init__(self, problems: Sequence[tuple[Location, str]]) -> None:
        super().__init__("; ".join(f"{'.'.join(str(p) for p in loc)}: {msg}" for loc, msg in problems))
        self.problems = list(problems)


def line_of(node: yaml.Node | None, location: Sequence[str | int]) -> int | None:
    """The 1-based line of the deepest YAML node the location reaches.

    Parts with no node of their own (a union member's tag, pydantic's `[key]`, a missing field) are
    skipped, so a missing field is reported at the line of the mapping that lacks it."""
    line = node.start_mark.line + 1 if node is not None else None
    for key in location:
        if isinstance(node, yaml.MappingNode):
            match = next((v for k, v in node.value if getattr(k, "value", None) == str(key)), None)
            if match is None:
                continue
            node = match
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and 0 <= key < len(node.value):
            node = node.value[key]
        else:
            continue
        line = node.start_mark.line + 1
    return line
