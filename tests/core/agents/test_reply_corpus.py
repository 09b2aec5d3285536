"""The reply corpus (tests/data/replies/): realistic replies in the styles of Claude, GPT, Gemini,
reasoning models and ReAct agents, each with what the parser must make of it."""

from __future__ import annotations

from collections import Counter

import pytest
import yaml

from core.agents.parser import parse_reply
from core.agents.reply_corpus import CorpusError, check, load_corpus, wrong_action
from core.backends.profile import load_backend

ACTIONS = load_backend("builtin").action_set()
CORPUS = load_corpus()


@pytest.mark.parametrize("entry", CORPUS, ids=[e.id for e in CORPUS])
def test_every_corpus_reply_parses_to_its_expectation(entry):
    result = parse_reply(entry.reply, ACTIONS, entry.paradigm)
    problem = check(entry, result)
    assert problem is None, f"{entry.id} ({entry.source}): {problem}"


def test_the_corpus_is_large_and_varied():
    assert len(CORPUS) >= 150
    styles = Counter(e.style for e in CORPUS)
    for style in ("claude", "gpt", "gemini", "react", "deepseek-r1", "llama"):
        assert styles[style] >= 3, f"too few {style} replies: {styles[style]}"
    kinds = Counter(("refused" if "refused" in e.expect else "accepted", e.paradigm) for e in CORPUS)
    assert all(kinds[k] >= 10 for k in [("accepted", "discrete"), ("refused", "discrete"),
                                         ("accepted", "continuous"), ("refused", "continuous")]), kinds


def test_a_corpus_expectation_that_is_wrong_is_caught(tmp_path):
    """The check itself can fail: a wrong action, a wrong assessment, or an acceptance where a refusal is due."""
    entry = CORPUS[0]
    (tmp_path / "one.yaml").write_text(yaml.safe_dump([
        {"id": "wrong-action", "reply": entry.reply, "expect": {"action": "Wait", "self_assessment": "progressing"}},
        {"id": "wrong-said", "reply": '{"action": "Wait"}', "expect": {"action": "Wait", "self_assessment": "stuck"}},
        {"id": "not-refused", "reply": '{"action": "Wait"}', "expect": {"refused": "unknown"}},
    ]))
    entries = load_corpus(tmp_path)
    results = [parse_reply(e.reply, ACTIONS, e.paradigm) for e in entries]
    problems = [check(e, r) for e, r in zip(entries, results)]
    assert problems[0].startswith("expected Wait, got MoveForward")
    assert problems[1] == "expected self_assessment 'stuck', got 'missing'"
    assert problems[2].startswith("expected a refusal ('unknown'), got Wait")
    assert [wrong_action(e, r) for e, r in zip(entries, results)] == [True, False, True]


@pytest.mark.parametrize(("content", "message"), [
    ("- id: a\n  reply: x\n", "needs id, reply"),
    ("- {id: a, reply: x, expect: {action: Wait}}\n", "must state its expected self_assessment"),
    ("- {id: a, reply: x, expect: {action: Wait, refused: y, self_assessment: stuck}}\n", "either action or refused"),
    ("- {id: a, reply: x, expect: {refused: y}}\n- {id: a, reply: x, expect: {refused: y}}\n", "used twice"),
    ("{not: a list}\n", "expected a list of entries"),
    ("- [unclosed\n", "cannot be read"),
])
def test_a_bad_corpus_file_is_reported_with_its_name(tmp_path, content, message):
    (tmp_path / "bad.yaml").write_text(content)
    with pytest.raises(CorpusError, match=message) as caught:
        load_corpus(tmp_path)
    assert "bad.yaml" in str(caught.value)
