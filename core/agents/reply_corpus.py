"""A corpus of model replies with what the parser must make of each (format: docs/replies.md).

Each YAML file in the folder is a list of entries:
    - id: gemini-fenced-trailing-commentary      # unique across the corpus
      style: gemini                               # whose habits it imitates
      paradigm: discrete                          # or continuous (default discrete)
      reply: |-
        ...the reply text...
      expect: {action: MoveForward, self_assessment: progressing, thought: "bakery"}
      # or, for continuous:  {action: Continuous, params: {left_stick: [0.5, 1.0], duration: 0.8}, ...}
      # or, for a refusal:   {refused: "substring of the reason", self_assessment: missing}

`check` says how a parse result differs from the expectation, or None when it matches. The corpus is
checked by tests/core/agents/test_reply_corpus.py and measured by `python main.py bench parse`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import yaml

from core.agents.assessment import SELF_ASSESSMENTS
from core.agents.parser import ParseResult
from core.paths import PROJECT_ROOT

DEFAULT_CORPUS = PROJECT_ROOT / "tests" / "data" / "replies"
_EXPECT_KEYS = {"action", "params", "self_assessment", "thought", "refused"}


class CorpusError(ValueError):
    """A corpus file that cannot be used; the message names the file and the entry."""


@dataclass(frozen=True)
class Entry:
    id: str
    style: str
    paradigm: str
    reply: str
    expect: dict[str, Any] = field(default_factory=dict[str, Any])
    source: str = ""


def load_corpus(folder: Path = DEFAULT_CORPUS) -> list[Entry]:
    files = sorted(Path(folder).glob("*.yaml"))
    if not files:
        raise CorpusError(f"no corpus files (*.yaml) in {folder}")
    entries: list[Entry] = []
    seen: set[str] = set()
    for path in files:
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise CorpusError(f"{path}: cannot be read: {exc}") from None
        if not isinstance(data, list):
            raise CorpusError(f"{path}: expected a list of entries, got {type(data).__name__}")
        for index, raw in enumerate(cast("list[Any]", data)):
            entry = _entry(raw, f"{path.name} entry {index + 1}")
            if entry.id in seen:
                raise CorpusError(f"{path.name}: the id {entry.id!r} is used twice")
            seen.add(entry.id)
            entries.append(entry)
    return entries


def _entry(raw: Any, where: str) -> Entry:
    fields = cast("dict[str, Any]", raw) if isinstance(raw, dict) else {}  # a YAML mapping, or nothing usable
    if not isinstance(fields.get("reply"), str) or not isinstance(fields.get("expect"), dict):
        raise CorpusError(f"{where}: needs id, reply (text) and expect (a mapping)")
    expect: dict[str, Any] = fields["expect"]
    if set(expect) - _EXPECT_KEYS or ("refused" in expect) == ("action" in expect):
        raise CorpusError(f"{where} ({fields.get('id')}): expect needs either action or refused, and only "
                          f"{sorted(_EXPECT_KEYS)}")
    if "action" in expect and expect.get("self_assessment") not in SELF_ASSESSMENTS:
        raise CorpusError(f"{where} ({fields.get('id')}): an accepted reply must state its expected self_assessment")
    paradigm = fields.get("paradigm", "discrete")
    if paradigm not in ("discrete", "continuous"):
        raise CorpusError(f"{where} ({fields.get('id')}): paradigm must be discrete or continuous")
    return Entry(str(fields.get("id") or where), str(fields.get("style", "")), paradigm, fields["reply"], expect, where)


def check(entry: Entry, result: ParseResult) -> str | None:
    expect = entry.expect
    if "refused" in expect:
        if result.action is not None:
            return f"expected a refusal ({expect['refused']!r}), got {result.action.describe()}"
        if expect["refused"].lower() not in (result.error or "").lower():
            return f"expected a refusal mentioning {expect['refused']!r}, got {result.error!r}"
    else:
        if result.action is None:
            return f"expected {expect['action']}, got a refusal: {result.error}"
        if result.action.name != expect["action"]:
            return f"expected {expect['action']}, got {result.action.describe()}"
        params: dict[str, Any] = expect.get("params") or {}
        for key, wanted in params.items():
            got = result.action.params.get(key)
            if not _same(got, wanted):
                return f"expected {key}={wanted!r}, got {got!r}"
    if "self_assessment" in expect and result.self_assessment != expect["self_assessment"]:
        return f"expected self_assessment {expect['self_assessment']!r}, got {result.self_assessment!r}"
    if "thought" in expect and expect["thought"].lower() not in result.thought.lower():
        return f"expected the thought to contain {expect['thought']!r}, got {result.thought[:120]!r}"
    return None


def wrong_action(entry: Entry, result: ParseResult) -> bool:
    """Whether the parser accepted an action the expectation does not allow: the failure that matters most,
    since a refused reply is retried and recorded, while a wrong action is silently carried out."""
    if result.action is None:
        return False
    expect = entry.expect
    if "refused" in expect or result.action.name != expect["action"]:
        return True
    params: dict[str, Any] = expect.get("params") or {}
    return any(not _same(result.action.params.get(k), v) for k, v in params.items())


def _same(got: Any, wanted: Any) -> bool:
    if isinstance(wanted, list) and isinstance(got, list):
        got_items, wanted_items = cast("list[Any]", got), cast("list[Any]", wanted)
        return len(got_items) == len(wanted_items) and all(_same(g, w) for g, w in zip(got_items, wanted_items))
    if isinstance(wanted, (int, float)) and isinstance(got, (int, float)):
        return abs(float(got) - float(wanted)) < 1e-9
    return bool(got == wanted)
