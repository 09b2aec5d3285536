"""Every metric on hand-made trajectories whose answers were worked out by hand."""

from __future__ import annotations

import math

import pytest

from core.session.metrics import (
    AWARE,
    EXECUTION,
    LOST,
    SUCCESS,
    UNAWARE,
    StepFacts,
    action_entropy,
    episode_metrics,
    pearson,
)


def move(distance: float, said: str = "progressing") -> StepFacts:
    return StepFacts("MoveForward", True, distance, said)


def turn(said: str = "unsure") -> StepFacts:
    return StepFacts("RotateLeft", False, 0.0, said)


def test_ineffective_moves_deadlocks_and_recovery():
    # moves: ok, IM, IM, (turn), IM, ok, IM, IM  -> spans: [1..4] recovered (3 IMs), tail of 2 is no span
    steps = [move(2.0), move(0.0), move(0.05), turn(), move(0.09), move(1.5), move(0.0), move(0.0)]
    m = episode_metrics(steps, success=False)
    assert m.movement_steps == 7 and m.ineffective_moves == 5
    assert m.im_rate == pytest.approx(5 / 7)
    assert m.max_consecutive_im == 3
    assert [(s.start, s.end, s.recovered) for s in m.deadlocks] == [(1, 4, True)]
    assert m.recovery_rate == 1.0
    assert m.failure_category == LOST  # the last IMs are only two: no final deadlock


def test_a_final_deadlock_is_aware_or_unaware_by_what_the_agent_said():
    unaware = [move(2.0), move(0.0), move(0.0), move(0.0), move(0.0)]
    aware = [move(2.0), move(0.0), move(0.0, "stuck"), move(0.0)]
    m = episode_metrics(unaware, success=False)
    assert m.failure_category == UNAWARE and m.recovery_rate == 0.0 and m.max_consecutive_im == 4
    assert episode_metrics(aware, success=False).failure_category == AWARE


def test_success_and_execution_failure():
    assert episode_metrics([move(2.0)], success=True).failure_category == SUCCESS
    assert episode_metrics([move(2.0), turn()], success=False, reached_goal_area=True).failure_category == EXECUTION


def test_action_entropy_in_bits():
    assert action_entropy(["A", "A", "A", "A"]) == 0.0
    assert action_entropy(["A", "B"]) == pytest.approx(1.0)
    assert action_entropy(["A", "B", "C", "D"]) == pytest.approx(2.0)
    assert action_entropy(["A", "A", "B", "C"]) == pytest.approx(1.5)
    assert action_entropy([]) == 0.0


def test_pearson_r():
    assert pearson([0.1, 0.2, 0.3], [1.0, 0.5, 0.0]) == pytest.approx(-1.0)
    assert pearson([1, 2, 3, 4], [2, 4, 5, 9]) == pytest.approx(11 / math.sqrt(5 * 26))  # sums worked by hand
    assert pearson([1, 1, 1], [0, 1, 0]) is None and pearson([1], [1]) is None
    assert not math.isnan(pearson([0, 1], [1, 0]))
