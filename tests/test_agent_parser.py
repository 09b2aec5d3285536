"""The reply parser: what real models emit is accepted, what cannot be executed is refused with a reason."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.agents.actions import ActionError, ActionSet
from core.agents.parser import parse_reply
from core.evaluation.profile import load_profile
from core.game.pad import Button
from core.paths import PROFILES_DIR

ACTIONS = ActionSet.from_profile_data(load_profile(PROFILES_DIR / "builtin_world.yaml").actions)


@pytest.mark.parametrize("reply", [
    '{"thought": "The bakery is ahead.", "self_assessment": "progressing", "action": "MoveForward"}',
    '```json\n{"thought": "ahead", "self_assessment": "progressing", "action": "MoveForward"}\n```',
    'I will keep walking.\n{"thought": "ahead", "self_assessment": "progressing", "action": "move forward"}\nDone.',
    "{'thought': 'ahead', 'self_assessment': 'Progressing', 'action': 'forward',}",
    '{"Thought": "ahead", "Self_Assessment": "PROGRESSING", "ACTION": "MOVE_FORWARD"}',
    '{"thought": "ahead", "self_assessment": "progressing", "action": {"name": "MoveForward"}}',
    '{"thought": "ahead", "self_assessment": "progressing", "action": ["MoveForward", "MoveForward"]}',
])
def test_sloppy_but_clear_replies_are_accepted(reply):
    result = parse_reply(reply, ACTIONS)
    assert result.ok, result.error
    assert result.action.name == "MoveForward" and result.self_assessment == "progressing"
    assert result.thought == "The bakery is ahead." or result.thought == "ahead"


def test_interact_expands_to_a_press_and_a_release():
    result = parse_reply('{"action": "press A", "self_assessment": "stuck"}', ACTIONS)
    (press, held), (release, _) = result.action.macro
    assert press.buttons == {Button.A} and held == pytest.approx(0.1) and release.buttons == frozenset()
    assert result.self_assessment == "stuck"


@pytest.mark.parametrize(("reply", "reason"), [
    ("", "the reply was empty"),
    ("   ", "the reply was empty"),
    ('{"thought": "hmm", "action": "Fly"}', "unknown action 'Fly'; choose one of: MoveForward"),
    ('{"action": "MoveForward"} {"action": "RotateLeft"}', "2 JSON objects with different actions"),
    ('{"action": ["MoveForward", "Interact"]}', "several different actions"),
    ("I think I should go left", 'no JSON object with an "action" field'),
    ('{"thought": "no idea"}', 'the JSON object has no "action" field'),
    ('{"action": 42}', "must be a name such as 'MoveForward'"),
])
def test_unusable_replies_are_refused_with_a_reason(reply, reason):
    result = parse_reply(reply, ACTIONS)
    assert not result.ok and reason in result.error


def test_continuous_control_is_range_checked():
    ok = parse_reply('{"action": {"type": "continuous", "left_stick": [0.5, 1.0], "right_stick": [0, 0], '
                     '"duration": 1.2, "buttons": ["B"]}}', ACTIONS, paradigm="continuous")
    assert ok.ok and ok.action.macro[0][0].left_x == 0.5 and ok.action.macro[0][1] == 1.2
    for bad, reason in [('"left_stick": [1.5, 0], "duration": 1', "left_stick.x=1.5 is outside [-1, 1]"),
                        ('"left_stick": [0, 0], "duration": 30', "duration 30 s is outside"),
                        ('"left_stick": [0], "duration": 1', "left_stick must be [x, y]"),
                        ('"left_stick": [0, 0], "duration": 1, "buttons": ["Q"]', "unknown button 'Q'")]:
        result = parse_reply('{"action": {' + bad + "}}", ACTIONS, paradigm="continuous")
        assert not result.ok and reason in result.error, result.error
    wrong_paradigm = parse_reply('{"action": "MoveForward"}', ACTIONS, paradigm="continuous")
    assert "continuous control" in wrong_paradigm.error


def test_a_bare_action_name_is_accepted():
    assert parse_reply("RotateLeft", ACTIONS).action.name == "RotateLeft"


def test_a_bad_action_set_is_reported():
    with pytest.raises(ActionError, match="actions.discrete"):
        ActionSet.from_profile_data({"discrete": {}})


@settings(max_examples=400)
@given(st.one_of(st.text(max_size=300), st.binary(max_size=50).map(lambda b: b.decode("latin-1")),
                 st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20)),
                              lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                                          max_size=4),
                              max_leaves=12).map(lambda v: '{"action": ' + repr(v) + "}")))
def test_the_parser_never_raises(reply):
    result = parse_reply(reply, ACTIONS)
    assert result.ok or result.error
    assert result.self_assessment in ("progressing", "stuck", "unsure")
