"""Every metric on hand-made trajectories whose answers were worked out by hand."""

from __future__ import annotations

import math

import pytest

from core.analysis.stats import correlation, pearson, pearson_p_value, t_two_sided_p
from core.episode import StepRecord
from core.episode.metrics import (
    AWARE,
    EXECUTION,
    INVALID_ACTION,
    LOST,
    SUCCESS,
    UNAWARE,
    UNCLASSIFIED,
    StepFacts,
    action_entropy,
    consecutive_im_series,
    continuous_facts,
    episode_metrics,
    stick_sector,
)


def move(distance: float, said: str = "progressing", pushed: float = 0.0) -> StepFacts:
    """An agent's MoveForward that moved `distance` metres; `pushed`: an automatic push-back after it."""
    return StepFacts("MoveForward", True, distance, said, external_displacement=pushed, intervention=pushed > 0)


def turn(said: str = "unsure") -> StepFacts:
    return StepFacts("RotateLeft", False, 0.0, said)


def human(distance: float) -> StepFacts:
    return StepFacts("human", False, distance, "", source="human")


def spans(steps: list[StepFacts]) -> list[tuple[int, int, str | None]]:
    return [(s.start, s.end, s.ended_by) for s in episode_metrics(steps, success=False).deadlocks]


def test_ineffective_moves_deadlocks_and_recovery_without_interventions():
    # steps 1..8: ok, IM, IM, (turn), IM, ok, IM, IM -> one span 2..5 ended by the agent's move at step 6
    steps = [move(2.0), move(0.0), move(0.05), turn(), move(0.09), move(1.5), move(0.0), move(0.0)]
    m = episode_metrics(steps, success=False)
    assert m.movement_steps == 7 and m.ineffective_moves == 5
    assert m.im_rate == pytest.approx(5 / 7)
    assert m.max_consecutive_im == 3
    assert spans(steps) == [(2, 5, "agent")]  # keyed by step number
    assert m.recovery_rate == 1.0
    assert m.failure_category == LOST  # the last IMs are only two: no final deadlock
    assert consecutive_im_series(steps) == [0, 1, 2, 2, 3, 0, 1, 2]


def test_a_push_back_is_never_credited_to_the_agent():
    # Three IMs against a fence, then an automatic push of 3 m. The agent's next MoveForward walks 2 m on its
    # own; measured from before the push it would have looked like 1 m and "recovered" the deadlock.
    steps = [move(2.0), move(0.0), move(0.0), move(0.0, pushed=3.0), move(2.0), move(0.0), move(0.0), move(0.0)]
    m = episode_metrics(steps, success=False)
    assert spans(steps) == [(2, 4, "intervention"), (6, 8, None)]
    assert m.recovery_rate == 0.0  # the push ended the first span, the second never ended
    assert m.ineffective_moves == 6 and m.movement_steps == 8 and m.im_rate == pytest.approx(6 / 8)
    assert m.max_consecutive_im == 3 and m.interventions == 1
    assert consecutive_im_series(steps) == [0, 1, 2, 0, 0, 1, 2, 3]


def test_a_push_that_moves_nothing_leaves_the_deadlock_running():
    # pushed into another wall: less than epsilon moved, so the agent is still stuck in the same span
    steps = [move(2.0), move(0.0), move(0.0), move(0.0, pushed=0.02), move(0.0), move(0.4)]
    assert spans(steps) == [(2, 5, "agent")]
    assert episode_metrics(steps, success=False).max_consecutive_im == 4


def test_human_steps_neither_recover_nor_count_as_agent_moves():
    # the human walks the character out of the corner: the span ends, but not as a recovery
    steps = [move(0.0), move(0.0), move(0.0), human(1.6), move(1.0)]
    m = episode_metrics(steps, success=False)
    assert spans(steps) == [(1, 3, "human")] and m.recovery_rate == 0.0
    assert m.movement_steps == 4 and m.agent_steps == 4 and m.steps == 5
    # a human step that does not move the character does not end the span
    assert spans([move(0.0), move(0.0), move(0.0), human(0.0), move(0.0), move(1.0)]) == [(1, 5, "agent")]


def test_a_text_hint_does_not_end_a_span_and_the_agents_own_escape_is_a_recovery():
    hinted = StepFacts("MoveForward", True, 0.0, "stuck", intervention=True)
    steps = [move(0.0), move(0.0), hinted, move(0.0), move(1.2)]
    m = episode_metrics(steps, success=False)
    assert spans(steps) == [(1, 4, "agent")] and m.recovery_rate == 1.0
    assert m.deadlocks[0].interventions == 1


def test_awareness_comes_from_what_the_agent_said_during_the_span():
    # A reply assesses the moves made before it: the first IM's own reply cannot speak about the span.
    unaware = [move(2.0), move(0.0, "progressing"), move(0.0, "progressing"), move(0.0, "progressing"),
               move(0.0, "progressing")]
    aware = [move(2.0), move(0.0), move(0.0, "stuck"), move(0.0)]
    m = episode_metrics(unaware, success=False)
    assert m.failure_category == UNAWARE and m.recovery_rate == 0.0 and m.max_consecutive_im == 4
    aware_metrics = episode_metrics(aware, success=False)
    assert aware_metrics.failure_category == AWARE and aware_metrics.deadlocks[0].awareness_step == 3
    # "stuck" said in the reply right after the last IM of a recovered span still belongs to it
    late = [move(0.0), move(0.0), move(0.0), move(1.0, "stuck")]
    assert episode_metrics(late, success=False).deadlocks[0].awareness == "aware"


@pytest.mark.parametrize("said", ["missing", "unsure", ""])
def test_missing_or_unsure_self_assessments_never_default_to_unaware(said):
    steps = [move(2.0), move(0.0, said), move(0.0, said), move(0.0, said), move(0.0, said)]
    m = episode_metrics(steps, success=False)
    assert m.failure_category == UNCLASSIFIED
    assert m.spans_by_awareness() == {"aware": 0, "unaware": 0, "unclassified": 1}
    assert m.to_json()["spans_by_awareness"]["unclassified"] == 1


def test_unaware_needs_progressing_in_most_replies_of_the_span():
    # replies that speak about the span are steps 3..5: progressing, missing, missing -> only 1 of 3
    weak = [move(2.0), move(0.0), move(0.0, "progressing"), move(0.0, "missing"), move(0.0, "missing")]
    assert episode_metrics(weak, success=False).failure_category == UNCLASSIFIED
    # progressing, progressing, unsure -> 2 of 3
    strong = [move(2.0), move(0.0), move(0.0, "progressing"), move(0.0, "progressing"), move(0.0, "unsure")]
    assert episode_metrics(strong, success=False).failure_category == UNAWARE


def test_success_and_execution_failure():
    assert episode_metrics([move(2.0)], success=True).failure_category == SUCCESS
    assert episode_metrics([move(2.0), turn()], success=False, reached_goal_area=True).failure_category == EXECUTION
    # a deadlock that a push ended is not the episode's final deadlock
    pushed = [move(0.0), move(0.0), move(0.0, pushed=3.0), turn()]
    assert episode_metrics(pushed, success=False).failure_category == LOST


def test_continuous_actions_are_moves_only_when_the_left_stick_asks_for_movement():
    assert continuous_facts({"left_stick": [0.0, 1.0], "right_stick": [0.0, 0.0]}) == ("L:N R:idle", True)
    assert continuous_facts({"left_stick": [0.1, 0.05], "right_stick": [-1.0, 0.0]}) == ("L:idle R:W", False)
    assert continuous_facts({"left_stick": [0.7, -0.7], "right_stick": [0.3, 0.3]}, dead_zone=0.5) == \
        ("L:SE R:idle", True)
    camera_only = StepFacts("L:idle R:W", False, 0.0)
    walking_into_wall = StepFacts("L:N R:idle", True, 0.0)
    m = episode_metrics([camera_only, camera_only, walking_into_wall], success=False)
    assert m.movement_steps == 1 and m.ineffective_moves == 1 and m.im_rate == 1.0


def test_stick_sectors_cover_the_compass():
    names = [stick_sector(math.sin(math.radians(a)), math.cos(math.radians(a))) for a in range(0, 360, 45)]
    assert names == ["N", "NE", "E", "SE", "S", "SW", "W", "NW"]
    assert stick_sector(0.1, 0.1) == "idle" and stick_sector(0.38, 0.92) == "N"  # 22.4 degrees: still north


def test_continuous_action_entropy_is_taken_over_binned_directions():
    # four actions in two bins (L:N twice, L:E twice, right stick idle) -> 1 bit; once all were "Continuous" = 0
    labels = [continuous_facts({"left_stick": s, "right_stick": [0, 0]})[0]
              for s in ([0.0, 1.0], [0.1, 0.9], [1.0, 0.0], [0.9, -0.1])]
    steps = [StepFacts(label, True, 1.0) for label in labels]
    assert episode_metrics(steps, success=False).action_entropy_bits == pytest.approx(1.0)


def test_invalid_replies_are_counted_apart_and_not_in_the_entropy():
    steps = [StepFacts("MoveForward", True, 1.0), StepFacts(INVALID_ACTION, False, 0.0),
             StepFacts("RotateLeft", False, 0.0)]
    m = episode_metrics(steps, success=False)
    assert m.invalid_replies == 1 and m.action_entropy_bits == pytest.approx(1.0)


def test_action_entropy_in_bits():
    assert action_entropy(["A", "A", "A", "A"]) == 0.0
    assert action_entropy(["A", "B"]) == pytest.approx(1.0)
    assert action_entropy(["A", "B", "C", "D"]) == pytest.approx(2.0)
    assert action_entropy(["A", "A", "B", "C"]) == pytest.approx(1.5)
    assert action_entropy([]) == 0.0


def _stored(record: dict, numbers: dict) -> StepFacts:
    """A step as a file stores it, read back the one way every reader does (StepRecord.from_stored)."""
    return StepRecord.from_stored(numbers, record).facts


def test_recorded_steps_are_scored_by_the_same_rules():
    push = {"action": "MoveForward", "movement": True, "self_assessment": "stuck", "entropy_label": "MoveForward",
            "intervention": {"kind": "push_back"}, "intervention_displacement": 3.0}
    fact = _stored(push, {"step": 4, "displacement": 0.0, "source": "agent"})
    assert fact.ineffective and fact.displaced_by == "intervention" and fact.step == 4 and fact.intervention
    # files before metrics v2: an invalid reply was recorded as NoOp with its parse error; continuous
    # actions were all "movement"
    old_invalid = _stored({"action": "NoOp", "parse_error": "no JSON", "movement": False},
                          {"displacement": 0.0, "source": "agent"})
    assert old_invalid.action == INVALID_ACTION
    old_camera = _stored({"action": "Continuous(left=[0.0, 0.0], right=[1.0, 0.0], 0.5s)", "movement": True,
                          "action_params": {"left_stick": [0.0, 0.0], "right_stick": [1.0, 0.0]}},
                         {"displacement": 0.0, "source": "agent"})
    assert not old_camera.movement and old_camera.action == "L:idle R:E"
    assert _stored({"action": "HumanInput"}, {"displacement": 2.0, "source": "human"}).displaced_by == "human"


def test_pearson_r():
    assert pearson([0.1, 0.2, 0.3], [1.0, 0.5, 0.0]) == pytest.approx(-1.0)
    assert pearson([1, 2, 3, 4], [2, 4, 5, 9]) == pytest.approx(11 / math.sqrt(5 * 26))  # sums worked by hand
    assert pearson([1, 1, 1], [0, 1, 0]) is None and pearson([1], [1]) is None
    assert not math.isnan(pearson([0, 1], [1, 0]))


def test_p_values_match_the_t_table():
    # two-sided 5% critical values: t(10) = 2.228; r at n = 10 is 0.632, at n = 30 is 0.361
    assert t_two_sided_p(2.228, 10) == pytest.approx(0.05, abs=2e-4)
    assert t_two_sided_p(1.0, 1) == pytest.approx(0.5)  # Cauchy: P(|T| > 1) = 1/2
    assert pearson_p_value(0.632, 10) == pytest.approx(0.05, abs=2e-4)
    assert pearson_p_value(-0.361, 30) == pytest.approx(0.05, abs=2e-4)
    assert pearson_p_value(0.0, 12) == pytest.approx(1.0) and pearson_p_value(0.5, 2) is None


def test_correlation_has_n_p_and_a_bootstrap_interval_around_r():
    xs = [0.1, 0.2, 0.3, 0.35, 0.5, 0.6, 0.7, 0.8]
    ys = [1.0, 0.8, 0.9, 0.6, 0.4, 0.5, 0.1, 0.2]
    found = correlation(xs, ys)
    assert found.n == 8 and found.r == pytest.approx(pearson(xs, ys))
    assert found.p_value == pytest.approx(pearson_p_value(found.r, 8))
    assert found.ci_low <= found.r <= found.ci_high <= -0.5  # strongly negative, even at the interval's top
    assert correlation(xs, ys) == found  # seeded: the same folder always gives the same interval
    assert correlation([0.1, 0.2], [1.0, 0.0]).p_value is None
    flat = correlation([0.1, 0.2, 0.3], [1.0, 1.0, 1.0])
    assert flat.r is None and "undefined" in flat.describe()


# -- issue 20: deadlocks that are physical, relative ε, aggregation, Execution Failure, small samples ---------
def in_dialogue(distance: float = 0.0, said: str = "progressing") -> StepFacts:
    """A MoveForward made while a dialogue box was open."""
    return StepFacts("MoveForward", True, distance, said, dialogue=True)


def test_moves_in_a_dialogue_count_in_the_im_rate_but_never_make_a_deadlock():
    steps = [move(2.0), in_dialogue(), in_dialogue(), in_dialogue(), in_dialogue(), move(2.0)]
    m = episode_metrics(steps, success=False)
    assert (m.movement_steps, m.ineffective_moves, m.im_rate) == (6, 4, pytest.approx(4 / 6))  # the paper's IM rate
    assert m.dialogue_moves == 4 and m.dialogue_ims == 4 and m.im_rate_physical == 0.0
    assert m.deadlocks == () and m.max_consecutive_im == 0
    # Nor do they extend or break a physical run: two walls, a dialogue between, one wall = a run of 3
    mixed = [move(0.0, "stuck"), move(0.0, "stuck"), in_dialogue(), move(0.0, "stuck")]
    assert spans(mixed) == [(1, 4, None)] and episode_metrics(mixed, success=False).failure_category == AWARE
    assert episode_metrics(mixed, success=False).to_json()["im_rate_physical"] == 1.0


def test_a_slow_free_continuous_walk_is_effective_and_a_blocked_full_stick_is_not():
    # The built-in world's calibration: a stick at 0.16 held 2 s moves 0.094 m in the open (threshold 25%: 0.024)
    from core.backends.profile import load_backend

    motion = load_backend("builtin").continuous_motion
    assert motion is not None
    slow = motion.threshold_m(0.16, 0.0, 2.0)
    assert motion.expected_metres(0.16, 0.0, 2.0) == pytest.approx(0.094, abs=0.005) and slow < 0.03
    walking = [StepFacts("L:E R:idle", True, 0.094, "progressing", epsilon=slow) for _ in range(3)]
    m = episode_metrics(walking, success=False)
    assert m.ineffective_moves == 0 and m.deadlocks == ()  # under the old absolute ε: 3 IMs, an Unaware span
    full = motion.threshold_m(0.0, 1.0, 0.5)
    assert full == pytest.approx(0.5, abs=0.01)  # a full stick for 0.5 s covers 2 m in the open
    scraping = [StepFacts("L:N R:idle", True, 0.3, "stuck", epsilon=full) for _ in range(3)]  # 0.3 m along a wall
    blocked = episode_metrics(scraping, success=False)
    assert blocked.ineffective_moves == 3 and blocked.failure_category == AWARE
    assert motion.threshold_m(0.1, 0.05, 1.0) == 0.0  # inside the dead zone: no move, no threshold
    assert motion.threshold_m(0.0, 1.0, 2.0, running=True) == pytest.approx(0.25 * 8.0 * motion.run_factor)


def test_an_episode_without_moves_has_no_im_rate():
    m = episode_metrics([turn(), turn(), StepFacts("Interact", False, 0.0)], success=False)
    assert m.movement_steps == 0 and m.im_rate is None and m.to_json()["im_rate"] is None
    assert m.im_rate_physical is None


def at(x: float, y: float, fact: StepFacts) -> StepFacts:
    from dataclasses import replace

    return replace(fact, position=(x, y))


def press(x: float, y: float) -> StepFacts:
    return StepFacts("Interact", False, 0.0, "progressing", interact=True, position=(x, y))


def test_execution_failure_is_a_deadlock_next_to_the_goal_or_a_failed_interaction_at_its_target():
    from core.episode.metrics import GoalArea

    goal = GoalArea(10.0, 0.0, interaction=True)
    # Stuck on the bench 2 m from the target: Execution Failure, not Aware Deadlock.
    near = [at(0, 0, move(2.0)), at(8, 0, move(2.0)), *(at(8, 0, move(0.0, "stuck")) for _ in range(3))]
    assert episode_metrics(near, success=False, goal=goal).failure_category == EXECUTION
    assert episode_metrics(near, success=False).failure_category == AWARE  # no goal known: the old rule
    # Stuck 20 m away: an Aware Deadlock, even though the goal area was passed through on the way.
    far = [at(9, 0, move(2.0)), at(30, 0, move(2.0)), *(at(30, 0, move(0.0, "stuck")) for _ in range(3))]
    assert episode_metrics(far, success=False, reached_goal_area=True, goal=goal).failure_category == AWARE
    # Both orders of a failed interaction at the target and a final deadlock elsewhere: Execution Failure.
    pressed_first = [at(9, 0, move(2.0)), press(9, 0), at(30, 0, move(2.0)),
                     *(at(30, 0, move(0.0, "stuck")) for _ in range(3))]
    assert episode_metrics(pressed_first, success=False, goal=goal).failure_category == EXECUTION
    stuck_first = [at(30, 0, move(2.0)), *(at(30, 0, move(0.0, "stuck")) for _ in range(3)),
                   at(9, 0, move(20.0)), press(9, 0)]
    assert episode_metrics(stuck_first, success=False, goal=goal).failure_category == EXECUTION
    # Pressing A far from the target is no interaction with it; a reach goal has no interaction to fail.
    elsewhere = [at(30, 0, move(2.0)), press(30, 0)]
    assert episode_metrics(elsewhere, success=False, goal=goal).failure_category == LOST
    reach_goal = GoalArea(30.0, 0.0, interaction=False)
    assert episode_metrics(elsewhere, success=False, goal=reach_goal).failure_category == LOST
    assert episode_metrics(elsewhere, success=False, reached_goal_area=True, goal=reach_goal).failure_category \
        == EXECUTION  # reached the goal area without a deadlock there: still the old rule


def test_a_stopped_episode_gets_no_failure_category():
    stopped = episode_metrics([move(0.0), move(0.0), move(0.0)], success=False, judged=False)
    assert stopped.failure_category == "" and len(stopped.deadlocks) == 1


def test_fisher_intervals_agree_with_the_p_value_and_small_samples_are_called_small():
    from core.analysis.stats import SMALL_N, fisher_interval

    # r = 0.5 at n = 28: z = 0.5493, se = 0.2, z ± 1.96 se = [0.1573, 0.9413] -> tanh: [0.156, 0.736]
    low, high = fisher_interval(0.5, 28)
    assert low == pytest.approx(0.156, abs=1e-3) and high == pytest.approx(0.736, abs=1e-3)
    assert fisher_interval(0.5, 3) == (None, None)
    # n = 4: the case (p = 0.051). Fisher's interval includes 0, as the p-value says it should.
    xs, ys = [0.1, 0.2, 0.3, 0.4], [0.2, 0.9, 0.0, -1.4]
    found = correlation(xs, ys)
    assert found.p_value is not None and found.p_value > 0.05
    assert found.fisher_low < 0 < found.fisher_high and found.too_small and SMALL_N == 10
    assert "n too small to conclude" in found.describe() and "Fisher 95% CI" in found.describe()
    many = correlation([i / 20 for i in range(20)], [1 - i / 20 + (i % 3) * 0.05 for i in range(20)])
    assert not many.too_small and "too small" not in many.describe()
