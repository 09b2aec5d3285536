"""Turning a model's reply into an action, read as a careful human reads it. See docs/replies.md.

The model is asked for one JSON object:
    {"thought": "...", "self_assessment": "progressing" | "stuck" | "unsure", "action": ...}

Accepted, because a careful reader understands them unambiguously:
  * the JSON anywhere in a reply of any length, first or last, in code fences, with prose, markdown
    and stray braces or quotes around it; JSON inside <thinking>/<think>/<reasoning> blocks is the
    model's scratchpad and is never taken as the answer;
  * sloppy JSON: single quotes, any key case, trailing commas, `//` and `/* */` comments, literal line
    breaks and unescaped quotes inside strings, Python/JS literals, bare words (lenient_json.py);
  * the answer inside a wrapper object ({"response": {...}}, {"final_answer": {...}});
  * action aliases ("move forward"), ReAct `Action: MoveForward` lines (with `Thought:` lines as the
    thought), and a reply that is just an action name;
  * a draft and then a final answer: the one marked final ("Final answer:", {"final": ...}), or the
    last when the earlier ones are marked as drafts or explicitly revised ("Actually, ...");
  * a reply cut off after its action was complete;
  * continuous control with sticks in any spelling, numbers as strings, at the top level or under
    "action" (controls.py, actions.py).

Refused, with a reason the agent can show the model on its retry (a wrong action is worse than a
refused one): two different actions with none marked final, an answer only inside a thinking block,
a reply cut off inside its action, unknown actions, a stick it cannot read or values out of range,
a continuous action that names no stick or button, the answer template repeated back, empty replies.

The self-assessment is one of SELF_ASSESSMENTS; "missing" when the reply gives none or one that
cannot be read with confidence (assessment.py). `parse_reply` never raises.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, cast

from core.agents.actions import Action, ActionError, ActionSet
from core.agents.assessment import (
    MISSING,
    PROGRESSING,
    SELF_ASSESSMENTS,
    STATED_ASSESSMENTS,
    STUCK,
    UNSURE,
    assessment_field,
    read_assessment,
)
from core.agents.controls import has_controls, normalized, read_controls
from core.agents.lenient_json import Found, Partial, Unreadable, find_objects, read_object
from core.agents.reply_layout import (
    Layout,
    action_lines,
    assessment_lines,
    blank,
    layout,
    marked_draft,
    marked_final,
    revised,
    thought_before,
)

__all__ = ["MISSING", "PROGRESSING", "SELF_ASSESSMENTS", "STATED_ASSESSMENTS", "STUCK", "UNSURE", "ParseResult",
           "parse_reply"]

MAX_REPLY_CHARS = 2_000_000
_ACTION_KEYS = {"action", "actions", "nextaction", "chosenaction", "selectedaction", "finalaction", "actionname"}
_THOUGHT_KEYS = ("thought", "thoughts", "reasoning", "reason", "rationale", "explanation", "analysis", "thinking")
_NAME_KEYS = ("name", "action", "type", "id", "command")
_PLACEHOLDER = re.compile(r"\s*(?:<[^<>]*>|\.\.\.|…|\?+|[A-Za-z]+(?:\s*\|\s*[A-Za-z]+)+)\s*")
_TEMPLATE = re.compile(r"<[^<>\n]{1,80}>|[\"']\s*\|\s*[\"']")  # the prompt's format line echoed back
_MARKUP = " \t\r\n*`'\".!#>"  # around a bare name: "**MoveForward**", "`Interact`.", "> Wait"
_WINDOW = 300  # how far before an answer its "Final answer:" / "Draft:" label may stand
_SHOWN = 2000  # how much of an unreadable object is looked at for what it was meant to say


@dataclass(frozen=True)
class ParseResult:
    action: Action | None
    thought: str
    self_assessment: str   # one of SELF_ASSESSMENTS
    error: str | None

    @property
    def ok(self) -> bool:
        return self.action is not None and self.error is None


@dataclass
class _Candidate:
    start: int
    end: int
    action: Action | None
    error: str | None
    holder: Mapping[str, Any]      # the object that carries the action (empty for an `Action:` line)
    outer: Mapping[str, Any]       # the top-level object around it
    final: bool = False
    draft: bool = False
    placeholder: bool = False
    weak: bool = False             # an `Action:` line whose text is not an action name: prose, not an answer

    @property
    def key(self) -> str:
        return self.action.describe() if self.action else f"error: {self.error}"

    @property
    def label(self) -> str:
        return self.action.describe() if self.action else f"an unusable action ({self.error})"


def parse_reply(text: Any, actions: ActionSet, paradigm: str = "discrete") -> ParseResult:
    try:
        return _parse(text, actions, paradigm)
    except Exception as exc:  # noqa: BLE001 - the contract is "never raises": any surprise becomes a recorded error
        return ParseResult(None, "", MISSING, f"could not parse the reply ({type(exc).__name__}: {exc})")


def _parse(text: Any, actions: ActionSet, paradigm: str) -> ParseResult:
    if not isinstance(text, str) or not text.strip():
        return ParseResult(None, "", MISSING, "the reply was empty")
    if len(text) > MAX_REPLY_CHARS:
        return ParseResult(None, "", MISSING, f"the reply is {len(text):,} characters long; the parser reads "
                                             f"replies up to {MAX_REPLY_CHARS:,}")
    lay = layout(text)
    found, unreadable = find_objects(lay.answer, wanted=lambda value: next(_holders(value), None) is not None)
    candidates = _object_candidates(found, lay.answer, actions, paradigm)
    prose = _blank_objects(lay.answer, found)
    candidates += _line_candidates(prose, actions)
    candidates.sort(key=lambda c: c.start)
    if not candidates:
        candidates = _bare_names(prose, actions)
        if not candidates:
            said = [read_assessment(v) for present, v in (assessment_field(o.value) for o in found) if present]
            return ParseResult(None, lay.thinking, said[-1] if said else _line_assessment(prose),
                               _nothing_found(lay, found, unreadable))
    chosen, problem = _choose(candidates, lay.answer)
    if chosen is not None and problem is None:
        problem = _later_unreadable(chosen, unreadable, lay.answer)
    # What the model said about itself, from the answers that agree with the one taken (all, if none is).
    speakers = [c for c in candidates if chosen is None or c.key == chosen.key]
    speakers.sort(key=lambda c: (chosen is not None and c is chosen, c.final), reverse=True)
    thought = next((t for t in (_thought(c, prose) for c in speakers) if t), lay.thinking)
    assessment = _assessment(speakers, prose)
    if problem is not None or chosen is None:
        return ParseResult(None, thought, assessment, problem)
    if chosen.error is not None or chosen.action is None:
        return ParseResult(None, thought, assessment, chosen.error)
    paradigm_problem = _paradigm_problem(chosen.action, paradigm)
    return ParseResult(None if paradigm_problem else chosen.action, thought, assessment, paradigm_problem)


# --- finding the candidate answers ---------------------------------------------------------------------------

def _holders(value: Any, path: tuple[str, ...] = (), depth: int = 0
             ) -> Iterator[tuple[tuple[str, ...], dict[str, Any]]]:
    """Every object inside `value` that carries an action: an "action" field, or continuous-control fields."""
    if isinstance(value, dict):
        fields = cast("dict[str, Any]", value)  # a JSON object
        if any(normalized(k) in _ACTION_KEYS for k in fields) or has_controls(fields):
            yield path, fields
            return
        if depth < 4:
            for key, inner in fields.items():
                yield from _holders(inner, (*path, normalized(key)), depth + 1)
    elif isinstance(value, list) and depth < 4:
        for inner in cast("list[Any]", value):
            yield from _holders(inner, path, depth + 1)


def _object_candidates(found: list[Found], answer: str, actions: ActionSet, paradigm: str) -> list[_Candidate]:
    out: list[_Candidate] = []
    previous_end = 0
    for obj in found:
        window = answer[max(previous_end, obj.start - _WINDOW):obj.start]
        for path, holder in _holders(obj.value):
            action_key = next((k for k in holder if normalized(k) in _ACTION_KEYS), None)
            value = holder[action_key] if action_key is not None else holder
            candidate = _Candidate(obj.start, obj.end, None, None, holder, obj.value)
            keys = (*path, normalized(action_key or ""))
            candidate.final = marked_final(window) or any("final" in k for k in keys)
            candidate.draft = marked_draft(window) or any(k.startswith(("draft", "initial", "tentative"))
                                                          for k in keys)
            candidate.placeholder = isinstance(value, str) and _PLACEHOLDER.fullmatch(value) is not None
            try:
                candidate.action = _action_from(value, holder, actions, paradigm)
            except ActionError as exc:
                candidate.error = str(exc)
            out.append(candidate)
        previous_end = obj.end
    return out


def _action_from(value: Any, holder: Mapping[str, Any], actions: ActionSet, paradigm: str, depth: int = 0) -> Action:
    if isinstance(value, Partial) or (value is holder and isinstance(holder, Partial)):
        raise ActionError("the reply was cut off inside the action; send the whole action")
    controls_beside = value is not holder and has_controls(holder)
    if paradigm == "continuous" and controls_beside and not isinstance(value, (dict, list)):
        # {"action": "continuous" / "walk to the door", "left_stick": [...], ...}: the fields are the action
        if isinstance(holder, Partial):
            raise ActionError("the reply was cut off before the action's fields were complete; send the whole action")
        return actions.continuous(**read_controls(holder))
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("{") and depth == 0:
            inner, _ = read_object(text, 0)
            return _action_from(inner, inner, actions, paradigm, depth + 1)
        if normalized(text) == "continuous":
            raise ActionError("the action says \"continuous\" but gives no left_stick, right_stick or buttons")
        return actions.discrete(text)
    if isinstance(value, list):
        items = cast("list[Any]", value)  # a JSON array
        distinct = {json.dumps(v, sort_keys=True, default=str) for v in items}
        if len(distinct) != 1:
            raise ActionError(f"several different actions in one reply ({len(items)}); choose exactly one")
        return _action_from(items[0], holder, actions, paradigm, depth + 1)
    if isinstance(value, dict):
        obj = cast("dict[str, Any]", value)  # a JSON object
        if has_controls(obj):
            fields = read_controls(obj)
            if controls_beside and read_controls(holder) != fields:
                raise ActionError("the reply gives two different sets of stick values; give one")
            return actions.continuous(**fields)
        fields = {normalized(k): v for k, v in obj.items()}
        for key in _NAME_KEYS:
            if isinstance(fields.get(key), str) and normalized(fields[key]) != "continuous":
                return actions.discrete(fields[key])
        if paradigm == "continuous":
            read_controls(obj)  # raises, naming the field it cannot read or saying that none was given
    if value is None:
        raise ActionError("the action is empty (null); choose one")
    raise ActionError(f"the action must be a name such as 'MoveForward' or a continuous control object, got {value!r}")


def _blank_objects(answer: str, found: list[Found]) -> str:
    if not found:
        return answer
    pieces: list[str] = []
    cursor = 0
    for obj in found:
        pieces += [answer[cursor:obj.start], blank(answer[obj.start:obj.end])]
        cursor = obj.end
    return "".join([*pieces, answer[cursor:]])


def _line_candidates(prose: str, actions: ActionSet) -> list[_Candidate]:
    out: list[_Candidate] = []
    previous_end = 0
    for line in action_lines(prose):
        value = line.value.strip(_MARKUP)
        if not value or value[0] in "{[" or normalized(value) == "continuous":
            previous_end = line.end
            continue  # the JSON on this line or the next is its own candidate
        name = _line_action_name(value, actions)
        final = line.label.startswith("final")
        if name is None and line.label == "final answer":
            continue  # "Final answer: I will head for the door" marks what follows; it is not an action itself
        window = prose[max(previous_end, line.start - _WINDOW):line.start]
        candidate = _Candidate(line.start, line.end, None, None, {}, {}, final=final or marked_final(window),
                               draft=marked_draft(window), weak=name is None)
        try:
            candidate.action = actions.discrete(name or value)
        except ActionError as exc:
            candidate.error = str(exc)
        out.append(candidate)
        previous_end = line.end
    return out


def _line_action_name(value: str, actions: ActionSet) -> str | None:
    """The action an `Action:` line names: "MoveForward", "move_forward()", "MoveForward - to the door"."""
    value = value[:200]
    if actions.resolve_name(value):
        return value
    call = re.fullmatch(r"([A-Za-z][\w \-]*?)\s*(?:\([^()]*\)|\[[^\[\]]*\])", value)
    if call and actions.resolve_name(call.group(1)):
        return call.group(1)
    head = re.split(r"\s+[-–—]\s+|[:;,(]|\.\s", value, maxsplit=1)[0].strip()
    if actions.resolve_name(head):
        return head
    first = value.split()[0] if value.split() else ""
    canonical = {normalized(name): name for name in actions.names}
    return canonical.get(normalized(first))


def _bare_names(prose: str, actions: ActionSet) -> list[_Candidate]:
    """A reply that is only an action name (any alias), or whose first or last line is exactly an action's
    own name ("MoveForward" and then an explanation). Aliases on a line of their own ("left", "a") are too
    common as words to be read as answers there."""
    whole = prose.strip(_MARKUP)
    if len(whole) <= 40 and actions.resolve_name(whole):
        return [_Candidate(0, len(prose), actions.discrete(whole), None, {}, {})]
    canonical = {normalized(name): name for name in actions.names}
    lines = [(m.start(), m.end(), m.group().strip(_MARKUP)) for m in re.finditer(r"[^\n]+", prose)
             if not m.group().isspace()]
    out: list[_Candidate] = []
    for start, end, line in sorted({lines[0], lines[-1]}) if lines else ():
        name = canonical.get(normalized(line)) if len(line) <= 40 else None
        if name is None:
            continue
        rest = normalized(prose[:start] + " " + prose[end:])
        others = [canonical[key] for key in canonical if canonical[key] != name and key in rest]
        if others:  # "MoveForward", then "... actually RotateLeft is better": the prose may overrule the line
            return [_Candidate(start, end, None, f"the reply names {name} on a line of its own but also mentions "
                               f"{', '.join(others)}; answer with one JSON object", {}, {})]
        out.append(_Candidate(start, end, actions.discrete(name), None, {}, {}))
    return out


# --- choosing among them --------------------------------------------------------------------------------------

def _choose(candidates: list[_Candidate], answer: str) -> tuple[_Candidate | None, str | None]:
    strong = [c for c in candidates if not c.weak] or candidates
    real = [c for c in strong if not c.placeholder]
    if not real:
        return None, (f"the reply repeats the answer template ({strong[-1].holder.get('action', '...')!r}) instead "
                      "of choosing an action")
    if len({c.key for c in real}) == 1:
        finals = [c for c in real if c.final]
        return (finals or real)[-1], None
    finals = [c for c in real if c.final]
    if finals:
        if len({c.key for c in finals}) == 1:
            return finals[-1], None
        return None, f"the reply marks {_listing(finals)} as final; send exactly one action"
    last = real[-1]
    differing = [c for c in real if c.key != last.key]
    if all(c.draft for c in differing) or revised(answer[differing[-1].end:last.start]):
        return last, None
    return None, (f"the reply holds {len({c.key for c in real})} different actions ({_listing(real)}) and none is "
                  "marked as the final answer; send exactly one")


def _listing(candidates: list[_Candidate]) -> str:
    labels = list(dict.fromkeys(c.label for c in candidates))
    return ", ".join(labels[:-1]) + f" and {labels[-1]}" if len(labels) > 1 else labels[0]


def _later_unreadable(chosen: _Candidate, unreadable: list[Unreadable], answer: str) -> str | None:
    for bad in unreadable:
        text = answer[bad.start:min(bad.end + 1, bad.start + _SHOWN)]
        if bad.start >= chosen.end and re.search(r"action\W{0,3}\s*:", text, re.I) and not _TEMPLATE.search(text):
            return (f"after the answer the reply holds another JSON object that could not be read ({bad.reason}); "
                    "send one readable answer")
    return None


def _nothing_found(lay: Layout, found: list[Found], unreadable: list[Unreadable]) -> str:
    if lay.thinking:
        hidden, _ = find_objects(lay.thinking)
        if any(next(_holders(obj.value), None) is not None for obj in hidden) or action_lines(lay.thinking):
            return ("the only action is inside a thinking block (the model's scratchpad), not in the answer; "
                    "give the answer after the thinking")
        if lay.open_thinking:
            return "the reply ended inside a thinking block, before any answer (it may have been cut off)"
    if found and found[-1].truncated:
        return "the reply was cut off before its action; send the whole JSON object"
    bad = [lay.answer[u.start:min(u.end + 1, u.start + _SHOWN)] for u in unreadable]
    if any(_TEMPLATE.search(text) for text in bad):
        return "the reply repeats the answer template instead of choosing an action"
    bad_reasons = [u.reason for u, text in zip(unreadable, bad) if re.search(r"action", text, re.I)]
    if bad_reasons:
        return f"the reply's JSON could not be read ({bad_reasons[-1]})"
    if any(not obj.strict and re.search(r"[\"']action[\"']\s*:", lay.answer[obj.start:min(obj.end, obj.start + _SHOWN)])
           for obj in found):
        return "the reply's JSON could not be read: its \"action\" field is lost in malformed text"
    if found:
        return "the JSON object has no \"action\" field"
    return "no JSON object with an \"action\" field was found in the reply"


def _paradigm_problem(action: Action, paradigm: str) -> str | None:
    if paradigm == "discrete" and action.name == "Continuous":
        return "this run uses discrete actions; answer with an action name such as 'MoveForward'"
    if paradigm == "continuous" and action.name != "Continuous":
        return "this run uses continuous control; answer with left_stick, right_stick, duration and buttons"
    return None


# --- what the model said about itself -------------------------------------------------------------------------

def _thought(candidate: _Candidate, prose: str) -> str:
    for fields in (candidate.holder, candidate.outer):
        lowered = {normalized(k): v for k, v in fields.items()}
        for key in _THOUGHT_KEYS:
            if isinstance(lowered.get(key), str) and lowered[key].strip():
                return lowered[key].strip()
    return thought_before(prose, candidate.start)


def _assessment(speakers: list[_Candidate], prose: str) -> str:
    """The self-assessment the answers state; "missing" if none does or if they contradict each other."""
    stated: set[str] = set()
    for candidate in speakers:
        for fields in (candidate.holder, candidate.outer):
            present, value = assessment_field(fields)
            if present:
                stated.add(read_assessment(value))
                break
    if not stated:
        return _line_assessment(prose)
    return stated.pop() if len(stated) == 1 else MISSING


def _line_assessment(prose: str) -> str:
    stated = {read_assessment(line.value) for line in assessment_lines(prose)}
    return stated.pop() if len(stated) == 1 else MISSING
