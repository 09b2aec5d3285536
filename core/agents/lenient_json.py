"""Finding and reading the JSON objects in a model's reply, as forgivingly as a careful human reads them.

Strict JSON goes through the standard library's decoder (C speed). Anything else goes through a small
recursive-descent reader that also accepts single quotes, Python and JavaScript literals (True, None,
NaN), bare keys and bare words, trailing and missing commas, `//` and `/* */` comments, literal line
breaks and unescaped quotes inside strings, and text that stops in the middle of an object: the members
finished before the cut are kept, in a `Partial` dict. An unfinished string, number or array is never
kept, so a cut-off `"duration": 1` (which may have been 1.5) is not read as 1.

Time grows linearly with the text: each `{` starts at most one attempt (and only where an object can
start: prose braces such as `{left edge}` are skipped), nesting is limited to MAX_DEPTH, look-aheads are
bounded, and the ends of comments are found once per text.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

MAX_DEPTH = 12  # replies nest three or four levels; deeper is not an answer

_DECODER = json.JSONDecoder(strict=False)  # strict=False: literal line breaks inside strings are fine
_BLANK = re.compile(r"\s*")
_BLANK_STARTS = frozenset(" \t\r\n\f\v/\u00a0\u2028\u2029\u3000")
# Where an object can start: `{` then a quoted key, a bare key and its colon, a closing brace, a comment,
# or the end of the text. Prose braces ({left edge}, {MoveLeft, RotateLeft}) are skipped without a try.
_START = re.compile(r"\{(?=\s*(?:[\"'}/]|[A-Za-z_$][\w$\-]*\s*(?::|\Z)|\Z))")
_STRICT_ATTEMPTS = 32
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_WORD = re.compile(r"[A-Za-z_$][\w$\-]*")
_LITERALS: dict[str, Any] = {"true": True, "false": False, "null": None, "none": None, "nan": float("nan"),
                             "infinity": float("inf"), "undefined": None}
# After `,` inside an object: what the start of the next member looks like (a key and its colon).
# The text may also end inside that key, when the reply was cut off there.
_NEXT_KEY = re.compile(r"""\s*(?:"(?:[^"\\\n]|\\.){0,80}(?:"\s*(?::|\Z)|\Z)"""
                       r"""|'(?:[^'\\\n]|\\.){0,80}(?:'\s*(?::|\Z)|\Z)"""
                       r"""|[A-Za-z_$][\w$\-]{0,40}\s*(?::|\Z))|\s*\}""")
_NEXT_ITEM = re.compile(r"""\s*[-+.\d"'{\[\]]|\s*(?:true|false|null|None|True|False)\b""")
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_STRING_STOPS = {'"': re.compile(r'["\\]'), "'": re.compile(r"['\\]")}
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "/": "/", "\\": "\\", '"': '"', "'": "'"}


class Partial(dict[str, Any]):
    """An object the text ended inside: only the members completed before the cut."""


class Bareword(str):
    """A value written without quotes (`"action": MoveForward`)."""


class LenientError(ValueError):
    def __init__(self, message: str, position: int, too_deep: bool = False) -> None:
        super().__init__(f"{message} at character {position}")
        self.position = position
        self.too_deep = too_deep


class _Cut(Exception):  # internal control flow: the text ended here
    def __init__(self, partial: Any = None) -> None:
        self.partial = partial


@dataclass(frozen=True)
class Found:
    """A JSON object in the reply: its value, where it starts and ends, and whether the text cut it off."""

    value: dict[str, Any]
    start: int
    end: int
    strict: bool

    @property
    def truncated(self) -> bool:
        return isinstance(self.value, Partial)


@dataclass(frozen=True)
class Unreadable:
    """Something that starts like an object but cannot be read, and why."""

    start: int
    end: int
    reason: str


def find_objects(text: str, wanted: Callable[[Any], bool] | None = None) -> tuple[list[Found], list[Unreadable]]:
    """Every top-level object in `text`, in order, and the `{`s that could not be read as one.

    `wanted(value)` says whether an object is worth keeping whole. An object read only leniently that is
    not wanted is searched inside as well, in case its sloppy reading swallowed a real answer.
    """
    found: list[Found] = []
    unreadable: list[Unreadable] = []
    reader = _Reader(text)
    strict_failures = 0
    index = _next_start(text, 0)
    while index != -1:
        # The standard decoder is fast when it succeeds, but each failure costs time proportional to the
        # position (it counts lines for its message), so text full of stray braces gets the lenient
        # reader alone after a few failures.
        if strict_failures < _STRICT_ATTEMPTS:
            try:
                value, end = _DECODER.raw_decode(text, index)
                found.append(Found(value, index, end, strict=True))
                index = _next_start(text, end)
                continue
            except (ValueError, RecursionError):
                strict_failures += 1
        try:
            value, end = reader.read_at(index)
        except LenientError as exc:
            unreadable.append(Unreadable(index, exc.position, str(exc)))
            # Nested too deeply: so is every object opened on the way down; an answer is never that deep
            # (a strictly valid deep object is not searched below four levels either).
            index = _next_start(text, exc.position if exc.too_deep else index + 1)
            continue
        found.append(Found(value, index, end, strict=False))
        if isinstance(value, Partial):
            break  # it ran to the end of the text
        index = _next_start(text, end if wanted is None or wanted(value) else index + 1)
    return found, unreadable


def _next_start(text: str, position: int) -> int:
    match = _START.search(text, position)
    return match.start() if match else -1


def read_object(text: str, start: int) -> tuple[dict[str, Any], int]:
    """Read one object leniently from text[start] == '{'. Returns the dict (a Partial if the text ends
    inside it) and the index just past it. Raises LenientError with the position of the problem."""
    return _Reader(text).read_at(start)


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self._marks: dict[str, list[int]] = {}

    def read_at(self, start: int) -> tuple[dict[str, Any], int]:
        self.pos = start
        try:
            value = self.object(0)
        except _Cut as cut:
            return (cut.partial if isinstance(cut.partial, Partial) else Partial()), len(self.text)
        return value, self.pos

    def _next(self, mark: str, after: int) -> int:
        """Where `mark` next occurs at or after `after` (-1: nowhere), from positions found once per text,
        so that many unclosed comments cost a lookup each rather than a scan each."""
        if mark not in self._marks:
            self._marks[mark] = [m.start() for m in re.finditer(re.escape(mark), self.text)]
        positions = self._marks[mark]
        at = bisect.bisect_left(positions, after)
        return positions[at] if at < len(positions) else -1

    def _skip(self, pos: int) -> int:
        """The position after white space and comments from `pos`."""
        text = self.text
        if pos < len(text) and text[pos] not in _BLANK_STARTS:
            return pos
        while True:
            pos = cast("re.Match[str]", _BLANK.match(text, pos)).end()  # \s* matches anywhere, if only ""
            if text.startswith("//", pos):
                newline = self._next("\n", pos)
                pos = len(text) if newline == -1 else newline
            elif text.startswith("/*", pos) and (close := self._next("*/", pos + 2)) != -1:
                pos = close + 2
            else:
                return pos

    def _space(self) -> str:
        """Skip white space and comments; the next character, or '' at the end (a cut)."""
        self.pos = self._skip(self.pos)
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def value(self, depth: int, context: str) -> Any:
        char = self._space()
        if not char:
            raise _Cut()
        if char == "{":
            return self.object(depth + 1)
        if char == "[":
            return self.array(depth + 1)
        if char in "\"'":
            return self.string(char, context)
        number = _NUMBER.match(self.text, self.pos)
        if number:
            self.pos = number.end()
            if self.pos >= len(self.text):
                raise _Cut()  # "1" at the very end may have been "1.5"
            return float(number.group()) if any(c in number.group() for c in ".eE") else int(number.group())
        sign = -1.0 if char == "-" and self.text.startswith("Infinity", self.pos + 1) else 1.0
        word = _WORD.match(self.text, self.pos + (1 if sign < 0 else 0))
        if not word:
            raise LenientError(f"unexpected {char!r}", self.pos)
        self.pos = word.end()
        if self.pos >= len(self.text):
            raise _Cut()
        literal = word.group().lower()
        if literal in _LITERALS:
            value = _LITERALS[literal]
            return sign * value if isinstance(value, float) else value
        return Bareword(word.group())

    def object(self, depth: int) -> dict[str, Any]:
        if depth > MAX_DEPTH:
            raise LenientError("nested too deeply", self.pos, too_deep=True)
        self.pos += 1  # the '{'
        result: dict[str, Any] = {}
        while True:
            try:
                char = self._space()
                if not char:
                    raise _Cut()
                if char == "}":
                    self.pos += 1
                    return result
                if char == ",":
                    self.pos += 1
                    continue
                key = self._key(char)
                if self._space() != ":":
                    if self.pos >= len(self.text):
                        raise _Cut()
                    raise LenientError(f"expected ':' after the key {key!r}", self.pos)
                self.pos += 1
                try:
                    result[key] = self.value(depth, "member")
                except _Cut as cut:
                    if isinstance(cut.partial, Partial):
                        result[key] = cut.partial
                    raise
                char = self._space()
            except _Cut:
                raise _Cut(Partial(result)) from None
            if char and char not in ",}\"'" and not _WORD.match(char):
                raise LenientError(f"expected ',' or '}}' after the value of {key!r}", self.pos)

    def _key(self, char: str) -> str:
        if char in "\"'":
            start = self.pos
            key = self.string(char, "key")  # a key ends at its first unescaped quote: prose stays prose
            if "\n" in self.text[start:self.pos]:
                raise LenientError("a key runs over a line break", start)
            return key
        word = _WORD.match(self.text, self.pos)
        if not word:
            raise LenientError(f"expected a key, found {char!r}", self.pos)
        self.pos = word.end()
        return word.group()

    def array(self, depth: int) -> list[Any]:
        if depth > MAX_DEPTH:
            raise LenientError("nested too deeply", self.pos, too_deep=True)
        self.pos += 1  # the '['
        items: list[Any] = []
        while True:
            char = self._space()
            if not char:
                raise _Cut()  # an unfinished list is never kept: [0.5, might have been [0.5, 1.0]
            if char == "]":
                self.pos += 1
                return items
            if char == ",":
                self.pos += 1
                continue
            items.append(self.value(depth, "item"))
            char = self._space()
            if char and char not in ",]":
                raise LenientError("expected ',' or ']' in a list", self.pos)

    def string(self, quote: str, context: str) -> str:
        text, pos = self.text, self.pos + 1
        parts: list[str] = []
        special = _STRING_STOPS[quote]
        while True:
            hit = special.search(text, pos)
            if hit is None:
                raise _Cut()
            at = hit.start()
            parts.append(text[pos:at])
            if text[at] == "\\":
                if at + 1 >= len(text):
                    raise _Cut()
                code = text[at + 1]
                if code == "u" and _HEX4.fullmatch(text, at + 2, at + 6):
                    point, pos = int(text[at + 2:at + 6], 16), at + 6
                    low = int(text[pos + 2:pos + 6], 16) if (text.startswith("\\u", pos)
                                                             and _HEX4.fullmatch(text, pos + 2, pos + 6)) else 0
                    if 0xD800 <= point < 0xDC00 and 0xDC00 <= low < 0xE000:
                        # a surrogate pair: how JSON writes a character beyond the basic plane
                        point, pos = 0x10000 + ((point - 0xD800) << 10) + (low - 0xDC00), pos + 6
                    parts.append(chr(point))
                else:
                    parts.append(_ESCAPES.get(code, "\\" + code))
                    pos = at + 2
                continue
            if context == "key" or self._closes(at + 1, context):
                self.pos = at + 1
                return "".join(parts)
            parts.append(quote)  # an unescaped quote inside the text: keep it
            pos = at + 1

    def _closes(self, after: int, context: str) -> bool:
        """Whether a quote at after-1 ends the string: what follows must be what follows a value."""
        text = self.text
        rest = self._skip(after)
        if rest >= len(text):
            return True
        char = text[rest]
        closer = "}" if context == "member" else "]"
        if char == closer:
            return True
        if char == ",":
            follow = _NEXT_KEY if context == "member" else _NEXT_ITEM
            next_token = self._skip(rest + 1)
            return next_token >= len(text) or follow.match(text, next_token) is not None
        # a member on the next line with its comma forgotten
        return context == "member" and "\n" in text[after:rest] and _NEXT_KEY.match(text, rest) is not None
