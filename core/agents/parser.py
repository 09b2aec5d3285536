"""Turning a model's reply into an action, leniently where models are sloppy and strictly where it matters.

The model is asked for one JSON object:
    {"thought": "...", "self_assessment": "progressing" | "stuck" | "unsure", "action": ...}
Accepted: code fences, prose around the JSON, single quotes, trailing commas, Python literals,
any key case, and action aliases ("move forward", "forward"). Rejected with a reason: unknown
actions, out-of-range values, several different actions, empty replies. `parse_reply` never raises.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any

from core.agents.actions import Action, ActionError, ActionSet

SELF_ASSESSMENTS = ("progressing", "stuck", "unsure")
MAX_REPLY_CHARS = 100_000


@dataclass(frozen=True)
class ParseResult:
    action: Action | None
    thought: str
    self_assessment: str
    error: str | None

    @property
    def ok(self) -> bool:
        return self.action is not None and self.error is None


def _objects(text: str) -> list[str]:
    """Every balanced {...} span at the top level, skipping braces inside strings."""
    spans, depth, start, quote, escaped = [], 0, -1, "", False
    for index, char in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
            continue
        if char in "\"'" and depth > 0:
            quote = char
        elif char == "{":
            if depth == 0:
                start = index
            depth += 1
        elif char == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                spans.append(text[start:index + 1])
    return spans


def _loads(candidate: str) -> dict[str, Any] | None:
    attempts = [candidate, re.sub(r",\s*([}\]])", r"\1", candidate)]
    for attempt in attempts:
        try:
            value = json.loads(attempt)
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    pythonic = re.sub(r"\btrue\b", "True", re.sub(r"\bfalse\b", "False", re.sub(r"\bnull\b", "None", attempts[1])))
    try:
        value = ast.literal_eval(pythonic)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _lower_keys(data: dict[str, Any]) -> dict[str, Any]:
    return {str(k).strip().lower().replace(" ", "_").replace("-", "_"): v for k, v in data.items()}


def _action_from(value: Any, actions: ActionSet) -> Action:
    if isinstance(value, str):
        return actions.discrete(value)
    if isinstance(value, list):
        distinct = {json.dumps(v, sort_keys=True, default=str) for v in value}
        if len(distinct) != 1:
            raise ActionError(f"several different actions in one reply ({len(value)}); choose exactly one")
        return _action_from(value[0], actions)
    if isinstance(value, dict):
        fields = _lower_keys(value)
        kind = str(fields.get("type", fields.get("kind", ""))).lower()
        if kind == "continuous" or any(k in fields for k in ("left_stick", "right_stick", "duration")):
            return actions.continuous(fields.get("left_stick", (0.0, 0.0)), fields.get("right_stick", (0.0, 0.0)),
                                      fields.get("duration", 0.5), fields.get("buttons", ()))
        name = fields.get("name", fields.get("action"))
        if isinstance(name, str):
            return actions.discrete(name)
    raise ActionError(f"the action must be a name such as 'MoveForward' or a continuous control object, got {value!r}")


def parse_reply(text: Any, actions: ActionSet, paradigm: str = "discrete") -> ParseResult:
    try:
        return _parse(text, actions, paradigm)
    except Exception as exc:  # noqa: BLE001 - the contract is "never raises": any surprise becomes a recorded error
        return ParseResult(None, "", "unsure", f"could not parse the reply ({type(exc).__name__}: {exc})")


def _parse(text: Any, actions: ActionSet, paradigm: str) -> ParseResult:
    if not isinstance(text, str) or not text.strip():
        return ParseResult(None, "", "unsure", "the reply was empty")
    text = text[:MAX_REPLY_CHARS]
    found = [obj for obj in (_loads(span) for span in _objects(text)) if obj is not None]
    with_action = [_lower_keys(obj) for obj in found if "action" in _lower_keys(obj)]
    if not with_action:
        bare = re.fullmatch(r"\s*[\"'`]?([A-Za-z][A-Za-z _-]{0,30})[\"'`.!]?\s*", text)
        if bare and actions.resolve_name(bare.group(1)) is not None and paradigm == "discrete":
            return ParseResult(actions.discrete(bare.group(1)), "", "unsure", None)
        reason = "no JSON object with an \"action\" field was found in the reply" if not found else \
            "the JSON object has no \"action\" field"
        return ParseResult(None, "", "unsure", reason)
    data = with_action[0]
    thought = str(data.get("thought", data.get("reasoning", "")) or "")
    assessment = str(data.get("self_assessment", "unsure") or "unsure").strip().lower()
    if assessment not in SELF_ASSESSMENTS:
        assessment = "unsure"
    try:
        candidates = [_action_from(obj["action"], actions) for obj in with_action]
        if len({c.describe() for c in candidates}) > 1:
            raise ActionError(f"the reply holds {len(candidates)} JSON objects with different actions; send one")
        action = candidates[0]
        if paradigm == "discrete" and action.name == "Continuous":
            raise ActionError("this run uses discrete actions; answer with an action name such as 'MoveForward'")
        if paradigm == "continuous" and action.name != "Continuous":
            raise ActionError("this run uses continuous control; answer with left_stick, right_stick and duration")
    except ActionError as exc:
        return ParseResult(None, thought, assessment, str(exc))
    return ParseResult(action, thought, assessment, None)
