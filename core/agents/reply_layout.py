"""The layout of a reply around its answer: thinking blocks, ReAct lines, and draft / final markers.

A careful reader ignores what a model wrote in its scratchpad (<thinking>, <think>, <reasoning>, the
analysis channel of gpt-oss), reads `Thought:` / `Action:` lines the way ReAct prompts lay them out,
and, when a reply holds more than one answer, looks for the words that say which one is meant:
"Final answer:", "Draft:", "Actually, ...". Everything here keeps character positions unchanged, so
the answer's place in the reply can be compared with the markers around it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_THINK_TAGS = "think|thinking|reasoning|scratchpad|reflection|analysis|internal_monologue"
_OPEN = re.compile(rf"<({_THINK_TAGS})(?:\s[^<>]{{0,200}})?>", re.I)
_LONE_CLOSE = re.compile(rf"</({_THINK_TAGS})>", re.I)
_HARMONY_FINAL = "<|channel|>final<|message|>"


_LABEL = r"^[ \t>*_#\-]*(?:\d+[.)][ \t]*)?"  # "**", "## ", "> ", "- ", "1. " before a label
_SEP = r"[ \t*_]*[:\uff1a][ \t*_`]*"
_ACTION_LINE = re.compile(_LABEL + r"(final[ _]answer|final[ _]action|(?:next|chosen|selected|my)[ _]action|action)"
                          + _SEP + r"(.*)$", re.I | re.M)
_ASSESSMENT_LINE = re.compile(_LABEL + r"(?:self[ _-]?assessment|assessment)" + _SEP + r"(.*)$", re.I | re.M)
_THOUGHT_LINE = re.compile(_LABEL + r"(?:thoughts?|reasoning)" + _SEP + r"(.*)$", re.I | re.M)
_ANY_LABEL = re.compile(_LABEL + r"[A-Za-z][A-Za-z _-]{0,30}" + _SEP, re.I)

_FINAL = re.compile(r"\bfinal(?:[ _](?:answer|action|decision|choice|json|response|output|move|reply|version|pick))?"
                    r"\b[ \t*_`]*(?:[:\uff1a=\n]|is\b)", re.I)
_DRAFT = re.compile(r"\b(?:draft|initial (?:answer|attempt|idea|plan|guess|choice)|first (?:attempt|draft|try|guess)|"
                    r"tentative(?:ly)?|preliminary)\b", re.I)
_REVISION = re.compile(r"\b(?:actually|on second thought|reconsider(?:ing)?|correction|corrected|revised?|revision|"
                       r"scratch that|instead|change (?:my|the) (?:mind|answer|action)|let me (?:fix|correct|redo|"
                       r"update|revise)|updated (?:answer|action)|better option)\b"
                       r"|(?:^|[.!?])\s*\bwait\s?[,.!:\u2014-]",  # "Wait, ..." opening a sentence; not "I could wait:"
                       re.I | re.M)


@dataclass(frozen=True)
class Layout:
    answer: str          # the reply with its thinking blocked out by spaces (positions unchanged)
    thinking: str        # what the thinking blocks said, joined
    open_thinking: bool  # the reply ends inside a thinking block


@dataclass(frozen=True)
class Line:
    start: int
    end: int
    label: str
    value: str


def layout(text: str) -> Layout:
    spans: list[tuple[int, int]] = []
    open_thinking = False
    final = text.rfind(_HARMONY_FINAL)
    if final != -1:
        spans.append((0, final + len(_HARMONY_FINAL)))
    position = spans[-1][1] if spans else 0
    first_open = _OPEN.search(text, position)
    lone_close = _LONE_CLOSE.search(text, position)
    if lone_close and (first_open is None or lone_close.start() < first_open.start()):
        # DeepSeek-R1-style: the opening tag belonged to the prompt template, only the closing one is here.
        spans.append((position, lone_close.end()))
        position = lone_close.end()
    while True:
        opening = _OPEN.search(text, position)
        if opening is None:
            break
        closing = re.compile(rf"</{re.escape(opening.group(1))}\s*>", re.I).search(text, opening.end())
        if closing is None:
            spans.append((opening.start(), len(text)))
            open_thinking = True
            break
        spans.append((opening.start(), closing.end()))
        position = closing.end()
    if not spans:
        return Layout(text, "", False)
    pieces: list[str] = []
    thinking: list[str] = []
    cursor = 0
    for start, end in spans:
        pieces.append(text[cursor:start])
        pieces.append(blank(text[start:end]))
        thinking.append(_strip_tags(text[start:end]))
        cursor = end
    pieces.append(text[cursor:])
    return Layout("".join(pieces), "\n".join(t for t in thinking if t).strip(), open_thinking)


def blank(chunk: str) -> str:
    """The chunk as spaces, keeping its line breaks (so positions and line starts stay where they were)."""
    return "\n".join(" " * len(line) for line in chunk.split("\n"))


def _strip_tags(chunk: str) -> str:
    return re.sub(rf"</?(?:{_THINK_TAGS})[^<>]{{0,200}}>|<\|[a-z_]+\|>(?:analysis|final|assistant)?", "", chunk,
                  flags=re.I).strip()


def _labelled(text: str, keywords: tuple[str, ...], pattern: re.Pattern[str], end: int | None = None
             ) -> list[re.Match[str]]:
    """Matches of a line pattern, tried only at the starts of lines that contain one of the keywords:
    a case-insensitive scan of every position is far slower, and most replies hold no such line."""
    end = len(text) if end is None else end
    lowered = text[:end].lower()
    starts: set[int] = set()
    for keyword in keywords:
        at = lowered.find(keyword)
        while at != -1:
            line_start = lowered.rfind("\n", 0, at) + 1
            starts.add(line_start)
            line_end = lowered.find("\n", at)
            at = -1 if line_end == -1 else lowered.find(keyword, line_end)
    found = (pattern.match(text, start, end) for start in sorted(starts))
    return [match for match in found if match]


def action_lines(text: str) -> list[Line]:
    return [Line(m.start(), m.end(), m.group(1).lower().replace("_", " "), m.group(2).strip())
            for m in _labelled(text, ("action", "final"), _ACTION_LINE)]


def assessment_lines(text: str) -> list[Line]:
    return [Line(m.start(), m.end(), "assessment", m.group(1).strip())
            for m in _labelled(text, ("assessment",), _ASSESSMENT_LINE)]


def thought_before(text: str, position: int) -> str:
    """The last `Thought:` paragraph before `position`, with its continuation lines."""
    matches = _labelled(text, ("thought", "reasoning"), _THOUGHT_LINE, position)
    if not matches:
        return ""
    last = matches[-1]
    lines = [last.group(1).strip()]
    for line in text[last.end():position].split("\n")[1:]:
        if not line.strip() or _ANY_LABEL.match(line):
            break
        lines.append(line.strip())
    return " ".join(p for p in lines if p).strip()


def marked_final(window: str) -> bool:
    return _FINAL.search(window) is not None


def marked_draft(window: str) -> bool:
    return _DRAFT.search(window) is not None


def revised(window: str) -> bool:
    return _REVISION.search(window) is not None
