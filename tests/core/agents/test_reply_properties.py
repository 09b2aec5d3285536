"""Properties of the reply parser over generated input: it never raises, it reads every valid JSON
object exactly as the standard library does, and a well-formed answer survives any prose around it."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from core.agents.lenient_json import find_objects, read_object
from core.agents.parser import SELF_ASSESSMENTS, STATED_ASSESSMENTS, parse_reply
from core.backends.profile import load_backend

ACTIONS = load_backend("builtin").action_set()

json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
              st.text(max_size=20)),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12)
json_objects = st.dictionaries(st.text(max_size=8), json_values, max_size=5)
# Prose as models write it, without the markers that legitimately change the reading (braces start
# objects; "final", "draft", "action:" and thinking tags are answers or labels).
prose = st.text(alphabet=st.characters(blacklist_characters="{}<>:", blacklist_categories=("Cs",)), max_size=200)


@settings(max_examples=400)
@given(st.one_of(st.text(max_size=300), st.binary(max_size=50).map(lambda b: b.decode("latin-1")),
                 json_values.map(lambda v: '{"action": ' + repr(v) + "}"),
                 json_values.map(lambda v: '{"action": {"left_stick": ' + json.dumps(v) + ', "duration": 1}}')),
       st.sampled_from(["discrete", "continuous"]))
def test_the_parser_never_raises(reply, paradigm):
    result = parse_reply(reply, ACTIONS, paradigm)
    assert result.ok or result.error
    assert result.self_assessment in SELF_ASSESSMENTS


@settings(max_examples=300)
@given(json_objects)
def test_the_lenient_reader_reads_valid_json_as_the_standard_library_does(value):
    text = json.dumps(value)
    assert read_object(text, 0) == (value, len(text))         # the lenient path on its own
    found, unreadable = find_objects(text)
    assert [f.value for f in found] == [value] and not unreadable


@settings(max_examples=300)
@given(json_objects)
def test_a_trailing_comma_and_a_comment_change_nothing(value):
    text = json.dumps(value, indent=1)
    if value:
        text = text[:-2] + ", // a note\n}"
    found, _ = find_objects(text)
    assert [f.value for f in found] == [value]


ALIASES = sorted({alias for name in ACTIONS.names for alias in [name, *ACTIONS.spec.discrete[name].aliases]})


@settings(max_examples=300)
@given(st.sampled_from(ALIASES),
       st.sampled_from(STATED_ASSESSMENTS), st.text(max_size=60), prose, prose, st.booleans())
def test_a_well_formed_answer_survives_any_prose_around_it(alias, said, thought, before, after, fenced):
    answer = json.dumps({"thought": thought, "self_assessment": said, "action": alias})
    if fenced:
        answer = f"```json\n{answer}\n```"
    result = parse_reply(f"{before}\n{answer}\n{after}", ACTIONS)
    assert result.ok, result.error
    assert result.action.name == ACTIONS.resolve_name(alias)
    assert result.self_assessment == said and result.thought == thought.strip()
