"""The order xdist's workers take the suite's modules in (tests/scheduling.py): a run ends with short modules on
both workers, not one long module on one of them, and two Minetests never run at once while anything else is left."""

from __future__ import annotations

from tests.scheduling import MEASURED_S, MINETEST_MODULES, WAITING_MODULES, next_scope

RAY = "tests/core/cluster/test_ray_runs.py"
STUDIO_MINETEST = "tests/studio/memory/test_studio_memory_minetest.py"
SHORT = "tests/core/agents/test_agent_parser.py"
ALSO_SHORT = "tests/core/labels/test_labels.py"


def test_the_longest_module_goes_first_and_unmeasured_ones_keep_their_order():
    queued = [SHORT, ALSO_SHORT, "tests/studio/test_studio_live.py", RAY]
    assert next_scope(queued, game_worker=False) == RAY
    assert next_scope([SHORT, ALSO_SHORT], game_worker=False) == SHORT
    assert MEASURED_S[RAY] > MEASURED_S["tests/studio/test_studio_live.py"] > 0


def test_minetest_modules_go_to_the_game_worker_first_and_to_others_only_when_nothing_else_is_left():
    queued = [SHORT, RAY, STUDIO_MINETEST, "tests/core/game/external/test_game_sound.py"]
    assert next_scope(queued, game_worker=True) == STUDIO_MINETEST
    assert next_scope(queued, game_worker=False) == RAY
    assert next_scope([SHORT], game_worker=True) == SHORT
    assert next_scope([STUDIO_MINETEST], game_worker=False) == STUDIO_MINETEST  # a worker is never left idle


def test_every_listed_module_exists():
    from core.paths import PROJECT_ROOT

    missing = [m for m in [*MEASURED_S, *MINETEST_MODULES, *WAITING_MODULES] if not (PROJECT_ROOT / m).is_file()]
    assert not missing, f"tests/scheduling.py names modules that are gone (renamed?): {missing}"


def test_a_module_that_mostly_waits_is_not_started_beside_another_while_anything_else_is_left():
    window_game = "tests/core/scaffold/test_backend_new_world_window.py"
    busy = "tests/studio/test_studio_live.py"
    queued = [SHORT, window_game, busy]
    assert next_scope(queued, game_worker=False) == window_game  # the longest, with nothing waiting elsewhere
    assert next_scope(queued, game_worker=False, waiting_elsewhere=True) == busy
    assert next_scope([window_game], game_worker=False, waiting_elsewhere=True) == window_game  # never idle
    assert RAY in WAITING_MODULES and window_game in WAITING_MODULES
