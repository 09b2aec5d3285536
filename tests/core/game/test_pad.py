import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.game.errors import InvalidPadError
from core.game.pad import Button, PadState


def test_values_just_outside_the_range_are_clamped_never_wrapped():
    pad = PadState(left_x=1.01, left_y=-1.2, right_x=-1.0000001, right_y=0.5)
    assert (pad.left_x, pad.left_y, pad.right_x, pad.right_y) == (1.0, -1.0, -1.0, 0.5)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_stick_values_are_rejected_naming_the_axis(bad):
    with pytest.raises(InvalidPadError, match="right_y"):
        PadState(right_y=bad)


def test_values_far_outside_the_range_are_a_caller_bug():
    with pytest.raises(InvalidPadError, match=r"left_x=5.0 is far outside \[-1, 1\]"):
        PadState(left_x=5)


def test_unknown_buttons_and_fields_are_rejected_with_the_valid_choices():
    with pytest.raises(InvalidPadError, match="unknown button 'Q'.*valid buttons are: A, B"):
        PadState(buttons={"Q"})
    with pytest.raises(InvalidPadError, match="unknown pad fields"):
        PadState.from_dict({"left_z": 0.3})
    with pytest.raises(InvalidPadError, match="must be a number"):
        PadState.from_dict({"left_x": "0.3"})


def test_button_aliases_parse():
    assert Button.parse("plus") is Button.PLUS
    assert Button.parse("up") is Button.DPAD_UP
    assert PadState(buttons={"a", "ZL"}).buttons == {Button.A, Button.ZL}


@given(st.floats(allow_nan=True, allow_infinity=True), st.floats(allow_nan=True, allow_infinity=True))
def test_any_float_either_lands_in_range_or_is_rejected(x, y):
    try:
        pad = PadState(left_x=x, right_y=y)
    except InvalidPadError:
        assert not (math.isfinite(x) and abs(x) <= 1.5 and math.isfinite(y) and abs(y) <= 1.5)
        return
    assert -1.0 <= pad.left_x <= 1.0 and -1.0 <= pad.right_y <= 1.0
    if abs(x) <= 1.0:
        assert pad.left_x == x


@given(st.builds(PadState, st.floats(-1, 1), st.floats(-1, 1), st.floats(-1, 1), st.floats(-1, 1),
                 st.frozensets(st.sampled_from(list(Button)))))
def test_round_trip_through_the_wire_format(pad):
    assert PadState.from_dict(pad.to_dict()) == pad
