"""How xdist hands the suite's modules to its workers: the longest first, and every module that starts Minetest on
one worker (`pytest_xdist_make_scheduler` in tests/conftest.py; `--dist loadscope` in pyproject.toml).

xdist's own loadscope hands modules out in collection order, which left the longest ones to chance: in a run on
2026-12-07 the studio's Memory tab on Minetest (160 s) started near the end, and one worker ran it alone for the
last minutes while the other had finished 134 s earlier. Handing out the longest first (the classic longest-
processing-time rule) leaves only short modules for the end, where they even the two workers out.

The modules that start Minetest stay on one worker, one after another, as they happened to in collection order:
two Minetests at once, each drawing through Mesa's software GL beside a memory scan, would starve each other's
real-time tests (an earlier try at longest-first ran them side by side and failed there). That worker takes them
first, then short modules; the other workers take everything else, a Minetest module only when nothing else is left.
With three workers on two cores (tests/conftest.py) the Minetest worker ran its six modules alone, 663 s of the run's
678 s, the run's longest path; one studio session now finds and signs for both the Memory tab's and the finder's
checks (tests/studio/memory/test_studio_memory_minetest.py), and the three workers end within seconds of each other.

MEASURED_S is each module's wall time in that run (two workers, cpu and wall per module); a module not listed
counts as 0 s and keeps its collection order behind the listed ones. Remeasure when a module grows long.
"""

from __future__ import annotations

from typing import Any

from xdist.scheduler import LoadScopeScheduling

MEASURED_S: dict[str, float] = {
    "tests/core/cluster/test_ray_runs.py": 181,
    "tests/studio/memory/test_studio_memory_minetest.py": 480,   # 2026-12-08, its build setting a struct aside
    "tests/core/game/external/test_minetest.py": 130,
    "tests/core/scaffold/test_backend_new_world_window.py": 83,
    "tests/core/scaffold/test_backend_new_minetest.py": 42,
    "tests/core/finder/test_memory_builtin.py": 35,
    "tests/studio/replay/test_studio_replay.py": 33,
    "tests/test_project.py": 32,
    "tests/core/agents/test_model_clients.py": 31,
    "tests/studio/memory/test_studio_memory.py": 29,
    "tests/studio/test_studio_live.py": 23,
    "tests/studio/test_studio_desktop_minetest.py": 21,
    "tests/studio/test_studio_desktop.py": 20,
    "tests/core/cli/test_run_errors.py": 18,
    "tests/core/evaluation/test_evaluator.py": 17,
    "tests/core/cli/test_run_stop.py": 17,
    "tests/core/agents/models/test_rate_limit.py": 16,
    "tests/studio/test_studio_control.py": 16,
    "tests/core/session/test_rl_training.py": 16,
    "tests/core/backends/test_start_check.py": 16,
    "tests/core/session/test_validity.py": 15,
    "tests/studio/replay/test_studio_replay_trust.py": 15,
    "tests/studio/test_studio_lifecycle.py": 15,
    "tests/core/game/external/test_ready_errors.py": 14,
    "tests/core/cli/test_free_play.py": 14,
    "tests/studio/test_studio_sound_output.py": 14,
    "tests/studio/test_studio_authoring.py": 13,
    "tests/studio/test_studio_live_task.py": 13,
    "tests/core/world/test_sound_bank_cache.py": 13,
}

MINETEST_MODULES = frozenset({
    "tests/core/game/external/test_game_sound.py",
    "tests/core/game/external/test_minetest.py",
    "tests/core/scaffold/test_backend_new_minetest.py",
    "tests/studio/memory/test_studio_memory_minetest.py",
    "tests/studio/test_studio_desktop_minetest.py",
})


# Modules that mostly wait (real-time games, a Ray cluster's start, timeouts on purpose): under a third of a core
# while they run (tests/cpuplug-style measurement, 2026-12-07). Two at once left a core idle for the run's first
# minutes (the longest-first rule started Ray and `backend new` on the world's window together): a worker takes one
# while another worker runs one only when nothing else is left.
WAITING_MODULES = frozenset({
    "tests/core/cluster/test_ray_runs.py",
    "tests/core/scaffold/test_backend_new_world_window.py",
    "tests/core/agents/test_model_clients.py",
    "tests/core/game/external/test_external_game.py",
    "tests/core/backends/test_start_check.py",
    "tests/core/game/external/test_ready_errors.py",
})


def module_of(scope: str) -> str:
    return scope.split("::", 1)[0]


def next_scope(queued: list[str], game_worker: bool, waiting_elsewhere: bool = False) -> str:
    """The scope a worker runs next: the longest it may take (Minetest's only on the game worker, unless nothing
    else is left; no module of WAITING_MODULES while another worker runs one, unless nothing else is left), queue
    order among equals."""
    def longest(scopes: list[str]) -> str:
        return max(scopes, key=lambda scope: (MEASURED_S.get(module_of(scope), 0.0), -queued.index(scope)))

    minetest = [scope for scope in queued if module_of(scope) in MINETEST_MODULES]
    others = [scope for scope in queued if module_of(scope) not in MINETEST_MODULES]
    if game_worker and minetest:
        return longest(minetest)
    if waiting_elsewhere:
        busy = [scope for scope in others if module_of(scope) not in WAITING_MODULES]
        others = busy or others
    return longest(others or minetest)


class LongestFirst(LoadScopeScheduling):
    """loadscope, choosing which module a worker gets next by next_scope()."""

    def _assign_work_unit(self, node: Any) -> None:
        game_worker = node.gateway.id == min(n.gateway.id for n in self.nodes)
        # What the other workers run: the scopes handed to them with tests still to finish.
        waiting_elsewhere = any(module_of(scope) in WAITING_MODULES and not all(tests.values())
                                for other, scopes in self.assigned_work.items() if other is not node
                                for scope, tests in scopes.items())
        chosen = next_scope(list(self.workqueue), game_worker, waiting_elsewhere)
        self.workqueue.move_to_end(chosen, last=False)  # the parent hands out the queue's first
        super()._assign_work_unit(node)
