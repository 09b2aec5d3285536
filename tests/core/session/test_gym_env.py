"""The Gymnasium wrapper passes Gymnasium's own checker, and its dense reward follows progress."""

from __future__ import annotations

import numpy as np
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


@pytest.fixture(scope="module")
def hearing_env():
    environment = PokeGymEnv("q08_site_navigation", dense_reward=True, step_budget=20, audio=True)
    yield environment
    environment.close()


@pytest.mark.filterwarnings("ignore:.*Not able to test alternative render modes:UserWarning")
def test_with_audio_the_observation_is_image_and_sound_and_passes_check_env(hearing_env):
    check_env(hearing_env, skip_render_check=False)
    space = hearing_env.observation_space
    assert isinstance(space, gymnasium.spaces.Dict) and set(space.spaces) == {"image", "audio"}
    observation, info = hearing_env.reset(seed=0)
    assert info["audio_frames"] == 0 and not observation["audio"].any()  # nothing played yet
    names = hearing_env.actions.names
    walked, *_, walk_info = hearing_env.step(names.index("MoveBackward"))
    frames = walk_info["audio_frames"]
    assert 0 < frames <= len(walked["audio"]) and frames % 800 == 0  # whole ticks of the step, padded after
    heard = walked["audio"][:frames].astype(float)
    assert np.sqrt((heard ** 2).mean()) > 100 and not walked["audio"][frames:].any()  # footsteps, then padding
    assert walked["image"].shape == space["image"].shape


def test_without_audio_the_world_runs_silent(env):
    assert env.audio_format is None and env.world.info.audio is None
