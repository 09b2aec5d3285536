"""The Gymnasium wrapper passes Gymnasium's own checker, and its dense reward follows progress."""

from __future__ import annotations

import pytest

gymnasium = pytest.importorskip("gymnasium", reason="install the rl extra")

from gymnasium.utils.env_checker import check_env  # noqa: E402

from core.session.gym_env import PokeGymEnv  # noqa: E402


@pytest.fixture(scope="module")
def env():
    environment = PokeGymEnv("q08_site_navigation", dense_reward=True, step_budget=20)
    yield environment
    environment.close()


# gymnasium warns that it cannot try other render modes on an env made without gymnasium.make; ours has one.
@pytest.mark.filterwarnings("ignore:.*Not able to test alternative render modes:UserWarning")
def test_the_environment_passes_check_env(env):
    check_env(env, skip_render_check=False)


def test_walking_toward_the_goal_earns_reward_and_walking_away_costs(env):
    env.reset(seed=0)
    names = env.actions.names
    # q08 starts on the north side of the plaza facing north; the site lies to the south-east.
    _, toward, *_ = env.step(names.index("MoveBackward"))
    _, away, *_ = env.step(names.index("MoveForward"))
    assert toward > 0.5 and away < -0.5
