"""The reply parser: what a careful human reads unambiguously is accepted; what cannot be executed,
or could only be guessed, is refused with a reason. A wrong action is worse than a refused one."""

from __future__ import annotations

import pytest

from core.agents.actions import ActionError, ActionSet
from core.agents.parser import MISSING, SELF_ASSESSMENTS, parse_reply
from core.backends.profile import load_backend
from core.game.pad import Button

ACTIONS = load_backend("builtin").action_set()
FORWARD = '{"thought": "The bakery is ahead.", "self_assessment": "progressing", "action": "MoveForward"}'


def accepted(reply: str, paradigm: str = "discrete"):
    result = parse_reply(reply, ACTIONS, paradigm)
    assert result.ok, result.error
    return result


def refused(reply: str, paradigm: str = "discrete"):
    result = parse_reply(reply, ACTIONS, paradigm)
    assert not result.ok and result.action is None, f"expected a refusal, got {result.action.describe()}"
    assert result.error
    return result


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
    result = accepted(reply)
    assert result.action.name == "MoveForward" and result.self_assessment == "progressing"
    assert result.thought in ("The bakery is ahead.", "ahead")


def test_interact_expands_to_a_press_and_a_release():
    result = parse_reply('{"action": "press A", "self_assessment": "stuck"}', ACTIONS)
    (press, held), (release, _) = result.action.macro
    assert press.buttons == {Button.A} and held == pytest.approx(0.1) and release.buttons == frozenset()
    assert result.self_assessment == "stuck"


# --- accepted: each form the issue lists ----------------------------------------------------------------------

@pytest.mark.parametrize("action", [
    '{"leftStick": [0.25, 1], "rightStick": [-0.5, 0], "duration": 0.8}',
    '{"left_stick": {"X": 0.25, "Y": 1}, "right_stick": {"X": -0.5, "Y": 0}, "duration": 0.8}',
    '{"left_stick": {"x": 0.25, "y": 1}, "right_stick": {"x": -0.5, "y": 0}, "duration": 0.8}',
    '{"left_stick_x": 0.25, "left_stick_y": 1, "right_stick_x": -0.5, "right_stick_y": 0, "duration": 0.8}',
    '{"LeftStickX": 0.25, "LeftStickY": 1, "RightStickX": -0.5, "RightStickY": 0, "Duration": 0.8}',
    '{"lx": 0.25, "ly": 1, "rx": -0.5, "ry": 0, "duration_ms": 800}',
    '{"Left Stick": [0.25, 1], "right-stick": [-0.5, 0], "duration": 0.8}',
    '{"sticks": {"left": [0.25, 1], "right": [-0.5, 0]}, "duration": 0.8}',
])
def test_stick_fields_in_any_spelling(action):
    result = accepted('{"self_assessment": "progressing", "action": ' + action + "}", "continuous")
    assert result.action.params["left_stick"] == [0.25, 1.0] and result.action.params["right_stick"] == [-0.5, 0.0]
    assert result.action.params["duration"] == pytest.approx(0.8)
    pad, seconds = result.action.macro[0]
    assert (pad.left_x, pad.left_y, pad.right_x) == (0.25, 1.0, -0.5) and seconds == pytest.approx(0.8)


@pytest.mark.parametrize("action", [
    '{"left_stick": ["0.25", "1"], "right_stick": ["-0.5", "0"], "duration": "0.8"}',
    '{"left_stick": {"x": "0.25", "y": "1.0"}, "right_stick": "[-0.5, 0]", "duration": "0.8 s"}',
    '{"left_stick_x": "0.25", "left_stick_y": "+1", "right_stick": "-0.5, 0", "duration": "800ms"}',
])
def test_numbers_written_as_strings(action):
    result = accepted('{"self_assessment": "unsure", "action": ' + action + "}", "continuous")
    assert result.action.params["left_stick"] == [0.25, 1.0] and result.action.params["right_stick"] == [-0.5, 0.0]
    assert result.action.params["duration"] == pytest.approx(0.8)


@pytest.mark.parametrize("where", ["first", "last"])
def test_replies_of_any_length_with_the_json_first_or_last(where):
    # 200 kB of reasoning, with the braces, quotes and apostrophes real reasoning has
    prose = ("I compare the two frames: the \"Inn\" sign {left edge} hasn't moved, so I'm not where I'd "
             "hoped. Options are {MoveLeft, RotateLeft}; the fence's gap is 'maybe' 1 m wide. ") * 1200
    assert len(prose) > 200_000
    reply = FORWARD + "\n\n" + prose if where == "first" else prose + "\n\n" + FORWARD
    result = accepted(reply)
    assert result.action.name == "MoveForward" and result.self_assessment == "progressing"
    assert result.thought == "The bakery is ahead."


@pytest.mark.parametrize("reply", [
    'The sign says "Bakery {open}" and it\'s the "right" place } {\n' + FORWARD,
    '<thinking>\nMaybe {"action": "RotateLeft"}? The "door" is {ahead}. I won\'t go "left".\n</thinking>\n' + FORWARD,
    '<think>{"action": "MoveLeft", "self_assessment": "stuck"} no - the path is clear</think>\n' + FORWARD,
    "okay, {so} the door... \"hmm\n</think>\n" + FORWARD,
    "}} stray {{ braces \" and a stray quote\n" + FORWARD + "\nThat's {it}.",
])
def test_stray_braces_and_quotes_in_prose_and_in_thinking_blocks(reply):
    result = accepted(reply)
    assert result.action.name == "MoveForward" and result.self_assessment == "progressing"


def test_literal_line_breaks_and_unescaped_quotes_inside_strings():
    reply = ('{"thought": "The sign says "Harbor Walk" and\npoints "left", toward the pier.\nI\'ll turn.",\n'
             ' "self_assessment": "progressing", "action": "RotateLeft"}')
    result = accepted(reply)
    assert result.action.name == "RotateLeft" and result.self_assessment == "progressing"
    assert result.thought == 'The sign says "Harbor Walk" and\npoints "left", toward the pier.\nI\'ll turn.'


def test_line_comments_and_block_comments():
    reply = ('```json\n{\n  // what I see\n  "thought": "Door ahead, see https://example.org/x", // not a URL cut\n'
             '  "self_assessment": "stuck", /* blocked twice */\n  "action": "Interact" // press A\n}\n```')
    result = accepted(reply)
    assert result.action.name == "Interact" and result.self_assessment == "stuck"
    assert result.thought == "Door ahead, see https://example.org/x"


@pytest.mark.parametrize("reply", [
    '{"response": ' + FORWARD + "}",
    '{"answer": {"result": ' + FORWARD + "}}",
    '{"name": "take_action", "arguments": ' + FORWARD + "}",
    '[' + FORWARD + "]",
    '{"thought": "The bakery is ahead.", "self_assessment": "progressing", "decision": {"action": "MoveForward"}}',
])
def test_a_wrapper_object_around_the_answer(reply):
    result = accepted(reply)
    assert result.action.name == "MoveForward" and result.self_assessment == "progressing"
    assert result.thought == "The bakery is ahead."


@pytest.mark.parametrize("reply", [
    'Draft: {"action": "MoveLeft"}\nFinal answer: {"action": "RotateRight", "self_assessment": "stuck"}',
    '**Final answer:**\n{"action": "RotateRight", "self_assessment": "stuck"}\n\nNot {"action": "MoveLeft"}.',
    'Draft: {"action": "MoveLeft", "self_assessment": "stuck"}\n{"action": "RotateRight", "self_assessment": "stuck"}',
    '{"action": "MoveLeft"}\nActually, the wall is there.\n{"action": "RotateRight", "self_assessment": "stuck"}',
    '{"action": "MoveLeft"} Wait, no - the wall. {"action": "RotateRight", "self_assessment": "stuck"}',
    '{"draft": {"action": "MoveLeft"}, "final": {"action": "RotateRight", "self_assessment": "stuck"}}',
    'Thought: turn or strafe?\nAction: MoveLeft\nSelf-assessment: stuck\nFinal Answer: RotateRight',
])
def test_draft_then_final_answer_takes_the_final_one(reply):
    result = accepted(reply)
    assert result.action.name == "RotateRight" and result.self_assessment == "stuck"


@pytest.mark.parametrize(("reply", "action", "thought"), [
    ("Thought: The lighthouse is straight ahead.\nAction: MoveForward", "MoveForward",
     "The lighthouse is straight ahead."),
    ("Thought: The inn is on my left,\nbehind the cart.\nAction: rotate_left()", "RotateLeft",
     "The inn is on my left, behind the cart."),
    ("**Thought:** Door.\n**Action:** `Interact`", "Interact", "Door."),
    ("Thought: Blocked.\nAction: MoveRight - around the crate", "MoveRight", "Blocked."),
    ("Thought: Wall.\nAction: turn left", "RotateLeft", "Wall."),
])
def test_react_action_lines_with_thought_lines(reply, action, thought):
    result = accepted(reply)
    assert result.action.name == action and result.thought == thought
    assert result.self_assessment == MISSING


def test_a_react_self_assessment_line_is_read():
    result = accepted("Thought: Same frame twice.\nSelf-assessment: stuck\nAction: MoveLeft")
    assert result.action.name == "MoveLeft" and result.self_assessment == "stuck"


@pytest.mark.parametrize(("reply", "said"), [
    ('{"thought": "The bakery is ahead.", "action": "MoveForward", "self_assessment": "progr', MISSING),
    ('{"action": "MoveForward", "self_assessment": "progressing", "thought": "The bakery is ahe', "progressing"),
    ('{"action": "MoveForward", "self_assessment": "progressing", "tho', "progressing"),
    ('```json\n{"action": "MoveForward",', MISSING),
    ("Thought: The bakery is ahead.\nAction: MoveForward\nObservation: I arri", MISSING),
])
def test_a_reply_cut_off_after_a_complete_action(reply, said):
    result = accepted(reply)
    assert result.action.name == "MoveForward" and result.self_assessment == said


@pytest.mark.parametrize("reply", [
    '{"thought": "The bakery is ahe',
    '{"thought": "ahead", "self_assessment": "progressing", "action": "MoveFor',
    '{"thought": "ahead", "action": {"left_stick": [0, 1], "duration": 1.',
    '{"thought": "ahead", "action": {"left_stick": [0, 1], "duration": 1',
    '{"thought": "ahead", "left_stick": [0, 1], "right_stick": [0, 0], "dura',
    '{"thought": "ahead", "action": {"left_stick": [0.5,',
])
def test_a_reply_cut_off_inside_or_before_its_action_is_refused(reply):
    paradigm = "continuous" if "stick" in reply else "discrete"
    assert "cut off" in refused(reply, paradigm).error


def test_continuous_fields_at_the_top_level():
    result = accepted('{"thought": "Walk and pan.", "self_assessment": "progressing", "left_stick": [0, 1], '
                      '"right_stick": [-0.4, 0], "duration": 1.0, "buttons": ["A"]}', "continuous")
    assert result.action.params == {"left_stick": [0.0, 1.0], "right_stick": [-0.4, 0.0], "duration": 1.0,
                                    "buttons": ["A"]}
    assert result.thought == "Walk and pan." and result.self_assessment == "progressing"
    labelled = accepted('{"action": "continuous", "leftStick": {"x": 0.5, "y": 0.5}, "duration": "0.4"}',
                        "continuous")
    assert labelled.action.params["left_stick"] == [0.5, 0.5] and labelled.action.params["duration"] == 0.4


# --- refused ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("reply", [
    '{"action": "MoveForward"} {"action": "RotateLeft"}',
    'Option 1: {"action": "MoveForward"}\nOption 2: {"action": "RotateLeft"}',
    'Thought: go\nAction: MoveForward\nObservation: ...\nThought: turn\nAction: RotateLeft',
    '{"plan": [{"action": "MoveForward"}, {"action": "RotateLeft"}]}',
    'Action: RotateLeft\n```json\n{"action": "MoveForward"}\n```',
    'Or I could wait: {"action": "Wait"} ... or walk {"action": "MoveForward"}',
    'Final answer: {"action": "MoveForward"}\nFinal answer: {"action": "RotateLeft"}',
])
def test_two_different_actions_neither_marked_final_are_refused(reply):
    error = refused(reply).error
    assert "MoveForward" in error and ("RotateLeft" in error or "Wait" in error)


@pytest.mark.parametrize(("action", "reason"), [
    ('{"left_stick": "forward", "duration": 1}', "left_stick must be [x, y]"),
    ('{"left_stick": {"y": 1}, "duration": 1}', "exactly the fields x and y"),
    ('{"left_stick_y": 1, "duration": 1}', "without the other axis"),
    ('{"left_stick": [0, 1, 0], "duration": 1}', "left_stick must be [x, y]"),
    ('{"left_stick": [0, "fast"], "duration": 1}', "left_stick.y must be a number"),
    ('{"left_stick": [0, true], "duration": 1}', "left_stick.y must be a number"),
    ('{"left_stick": [NaN, 1], "duration": 1}', "must be a finite number"),
    ('{"left_stick": [0, "inf"], "duration": 1}', "must be a finite number"),
    ('{"left_stick": [0, 1.5], "duration": 1}', "left_stick.y=1.5 is outside [-1, 1]"),
    ('{"camera": [0.5, 0], "left_stick": [0, 1], "duration": 1}', "the control field 'camera'"),
    ('{"angle": 90, "speed": 1, "duration": 1}', "the control field 'angle'"),
    ('{"left_stick": [0, 1], "leftStick": [0, -1], "duration": 1}', "given twice with different values"),
    ('{"type": "continuous", "duration": 1}', "gives no left_stick, right_stick or buttons"),
    ('{"duration": 1}', "gives no left_stick, right_stick or buttons"),
    ('"continuous"', "gives no left_stick, right_stick or buttons"),
])
def test_a_stick_it_cannot_read_is_refused_and_never_becomes_standing_still(action, reason):
    result = refused('{"self_assessment": "progressing", "action": ' + action + "}", "continuous")
    assert reason in result.error, result.error


def test_standing_still_is_accepted_only_when_said():
    still = accepted('{"action": {"left_stick": [0, 0], "right_stick": [0, 0], "duration": 0.5}}', "continuous")
    assert still.action.params["left_stick"] == [0.0, 0.0]
    neutral = accepted('{"action": {"left_stick": "neutral", "right_stick": [0.3, 0], "duration": 0.5}}',
                       "continuous")
    assert neutral.action.params["left_stick"] == [0.0, 0.0] and neutral.action.params["right_stick"] == [0.3, 0.0]


@pytest.mark.parametrize(("reply", "reason"), [
    ("", "the reply was empty"),
    ("   ", "the reply was empty"),
    ('{"thought": "hmm", "action": "Fly"}', "unknown action 'Fly'; choose one of: MoveForward"),
    ('{"action": ["MoveForward", "Interact"]}', "several different actions"),
    ("I think I should go left", 'no JSON object with an "action" field'),
    ('{"thought": "no idea"}', 'the JSON object has no "action" field'),
    ('{"action": 42}', "must be a name such as 'MoveForward'"),
    ('{"action": null}', "the action is empty"),
    ('<think>The door. {"action": "Interact"}</think>', "only action is inside a thinking block"),
    ("<think>The door is ahead and I", "ended inside a thinking block"),
    ('{"thought": "...", "action": "<one action name>"}', "repeats the answer template"),
    ('{"action": "MoveForward"}\nFinal: {"action": MoveLeft please}', "could not be read"),
])
def test_unusable_replies_are_refused_with_a_reason(reply, reason):
    assert reason in refused(reply).error


def test_continuous_control_is_range_checked():
    ok = accepted('{"action": {"type": "continuous", "left_stick": [0.5, 1.0], "right_stick": [0, 0], '
                  '"duration": 1.2, "buttons": ["B"]}}', paradigm="continuous")
    assert ok.action.macro[0][0].left_x == 0.5 and ok.action.macro[0][1] == 1.2
    for bad, reason in [('"left_stick": [1.5, 0], "duration": 1', "left_stick.x=1.5 is outside [-1, 1]"),
                        ('"left_stick": [0, 0], "duration": 30', "duration 30 s is outside"),
                        ('"left_stick": [0], "duration": 1', "left_stick must be [x, y]"),
                        ('"left_stick": [0, 0], "duration": 1, "buttons": ["Q"]', "unknown button 'Q'")]:
        result = refused('{"action": {' + bad + "}}", paradigm="continuous")
        assert reason in result.error, result.error
    assert "continuous control" in refused('{"action": "MoveForward"}', paradigm="continuous").error
    assert "discrete actions" in refused('{"action": {"left_stick": [0, 1], "duration": 1}}').error


def test_a_bare_action_name_is_accepted():
    assert accepted("RotateLeft").action.name == "RotateLeft"
    assert accepted("**Interact**\n").action.name == "Interact"
    assert accepted("MoveForward\n\nThe bakery is straight ahead.").action.name == "MoveForward"
    assert accepted("The guard is in front of me.\n\n`Interact`").action.name == "Interact"


def test_a_name_line_that_the_prose_overrules_is_refused():
    assert "also mentions RotateLeft" in refused("MoveForward\n\nActually, RotateLeft is better.").error
    assert "no JSON object" in refused("left\n\nThe path goes left.").error  # an alias alone is just a word


def test_a_bad_action_set_is_reported():
    with pytest.raises(ActionError, match="actions.discrete"):
        ActionSet.from_data({"discrete": {}})


# --- the self-assessment ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("said", "read"), [
    ("progressing", "progressing"), ("Stuck", "stuck"), ("UNSURE", "unsure"),
    ("making progress", "progressing"), ("moving", "progressing"), ("not stuck", "progressing"),
    ("blocked", "stuck"), ("not moving", "stuck"), ("no progress", "stuck"), ("I'm stuck", "stuck"),
    ("I can\u2019t move", "stuck"), ("\u2018progressing\u2019", "progressing"), ("**Stuck**", "stuck"),
    ("uncertain", "unsure"), ("not sure", "unsure"),
    ("stuck - a fence is in the way", "stuck"), ("progressing (the pier is closer)", "progressing"),
    # ambiguous: never a guess
    ("progressing but maybe stuck", MISSING), ("stuck, or maybe not", MISSING), ("probably stuck", MISSING),
    ("progressing / stuck", MISSING), ("on track", MISSING), ("good", MISSING), ("stuckish", MISSING),
    ("", MISSING), (True, MISSING), (1, MISSING), (None, MISSING), (["stuck"], MISSING),
])
def test_the_self_assessment_is_read_strictly(said, read):
    import json

    result = accepted(json.dumps({"action": "Wait", "self_assessment": said}))
    assert result.self_assessment == read


def test_a_missing_self_assessment_is_missing_not_unsure():
    assert accepted('{"action": "Wait"}').self_assessment == MISSING
    assert accepted("Wait").self_assessment == MISSING
    assert refused("nothing usable").self_assessment == MISSING
    assert SELF_ASSESSMENTS == ("progressing", "stuck", "unsure", "missing")


def test_agreeing_answers_lend_their_self_assessment_and_disagreeing_ones_make_it_missing():
    agree = accepted('{"action": "MoveLeft", "self_assessment": "stuck"}\nSo: {"action": "MoveLeft"}')
    assert agree.self_assessment == "stuck"
    disagree = accepted('{"action": "MoveLeft", "self_assessment": "stuck"}\n'
                        '{"action": "MoveLeft", "self_assessment": "progressing"}')
    assert disagree.self_assessment == MISSING


def test_a_decision_carries_only_a_known_self_assessment():
    from core.agents.base import Decision, decision_from_reply

    assert decision_from_reply('{"action": "Wait"}', ACTIONS, "discrete", 0.0).self_assessment == MISSING
    with pytest.raises(ValueError, match="self_assessment must be one of"):
        Decision(None, "", "confused", "")
