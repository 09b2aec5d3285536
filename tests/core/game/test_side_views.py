"""Side views by turning the camera (as an emulator needs) on the built-in world, against its instant views."""

from __future__ import annotations

import numpy as np
import pytest

from core.agents.base import RandomAgent
from core.agents.observe import ObservationOptions
from core.backends.profile import load_backend
from core.evaluation.client import EvaluatorClient
from core.evaluation.tasks import load_task
from core.game.side_views import capture_side_views
from core.paths import TASKS_DIR
from core.recording.reader import EpisodeReader
from core.session.runner import EpisodeRunner, RunOptions


def test_turned_views_show_what_the_instant_views_show_and_cost_game_time(world, truth):
    world.reset("plaza")
    instant = capture_side_views(world, "instant")
    before, yaw_before = world.latest_frame(), truth.read()["camera_yaw"]
    turned = capture_side_views(world, "turn")
    after = world.latest_frame()
    # Turning by exactly 90 degrees with the stick renders the same pictures the world renders instantly.
    assert np.array_equal(turned.left.pixels, instant.left.pixels)
    assert np.array_equal(turned.right.pixels, instant.right.pixels)
    assert not np.array_equal(turned.left.pixels, before.pixels)
    # Back where the agent was looking, and the turns took game time: 23 + 45 + 23 ticks at 30 Hz.
    assert np.array_equal(after.pixels, before.pixels)
    assert (truth.read()["camera_yaw"] - yaw_before + 180) % 360 - 180 == pytest.approx(0, abs=1e-6)
    assert turned.game_seconds == pytest.approx(91 / 30) and instant.game_seconds == 0.0
    assert after.tick - before.tick == 91


@pytest.mark.parametrize("mode", ["turn", "instant"])
def test_the_step_record_and_the_result_say_how_side_views_were_made(world, builtin_profile, tmp_path, mode):
    actions = load_backend("builtin").action_set()
    task = load_task(TASKS_DIR / "q08_site_navigation.yaml", builtin_profile.flags)
    options = RunOptions(step_budget=2, observation=ObservationOptions(side_views=True, side_view_mode=mode))
    with EvaluatorClient.launch(world.pid) as evaluator:
        evaluator.wait_locked()
        result = EpisodeRunner(world, evaluator, RandomAgent(actions, seed=2), actions, task, options,
                               tmp_path / "e.h5").run()
    assert result.side_views == mode  # instant results are marked: not comparable with emulator runs
    with EpisodeReader(tmp_path / "e.h5") as episode:
        views = [record["side_views"] for record in episode.records()]
        assert episode.metadata["options"]["observation"]["side_view_mode"] == mode
    expected = pytest.approx(91 / 30, abs=1e-3) if mode == "turn" else 0.0
    assert all(v["mode"] == mode and v["game_seconds"] == expected for v in views)


def test_an_unknown_side_view_mode_is_refused():
    with pytest.raises(ValueError, match="side_view_mode"):
        ObservationOptions(side_views=True, side_view_mode="teleport")
