"""The order the suite's modules are handed to the xdist workers: the longest first.

pytest-xdist's `loadscope` hands each worker whole modules (their module-scoped games are started once), by
default the modules with the most tests first. Test count says little about time here: the Minetest finder
module has 6 tests and takes 4 to 6 minutes, and handed out late it ran alone at the end of the run while
the other worker sat idle. Longest first (pyproject.toml passes `--no-loadscope-reorder` so this order is
kept) lets the short modules fill in around the long ones.

The games that run in real time (Minetest) are spread so that one worker takes them one after another while
the other works through CPU-bound modules: two real-time games competing for two cores make their timing
tolerances a matter of luck. Measured with `python -m pytest --durations=60` (seconds per module, 2 cores);
re-measure when a module grows slow. Modules not listed keep their collection order after these.
"""

from __future__ import annotations

LONGEST_FIRST = (
    "tests/core/finder/test_memory_minetest.py",            # ~300 s, real-time Minetest
    "tests/core/cluster/test_ray_runs.py",                  # ~160 s
    "tests/studio/memory/test_studio_memory_minetest.py",   # ~165 s, real-time Minetest
    "tests/core/finder/test_memory_builtin.py",             # ~70 s
    "tests/core/game/external/test_minetest.py",            # ~130 s, real-time Minetest
    "tests/test_project.py",                                # ~50 s (pyright, ruff, import contracts)
    "tests/studio/test_studio_desktop.py",                  # ~50 s
    "tests/core/scaffold/test_backend_new_minetest.py",     # ~60 s, real-time Minetest
    "tests/studio/memory/test_studio_memory.py",            # ~35 s
    "tests/studio/test_studio_desktop_minetest.py",         # ~30 s, real-time Minetest
    "tests/core/session/test_rl_training.py",               # ~25 s
    "tests/core/cli/test_run_stop.py",                      # ~25 s
    "tests/core/analysis/test_report.py",                   # ~20 s
    "tests/studio/test_studio_sound_output.py",             # ~20 s
    "tests/core/session/test_validity.py",                  # ~20 s
    "tests/core/scaffold/test_backend_new_world_window.py",  # ~60 s
)


def module_rank(nodeid: str) -> int:
    """Where a test's module goes in the hand-out order: listed modules by their place, the rest after."""
    module = nodeid.split("::", 1)[0]
    try:
        return LONGEST_FIRST.index(module)
    except ValueError:
        return len(LONGEST_FIRST)
