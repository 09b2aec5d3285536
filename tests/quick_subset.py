"""The quick loop: `python -m pytest -m quick` (about a minute on 2 cores; every package is in it).

Chosen from measured durations (junit XML of a full run): per test package its fastest modules, up to about
6 s of test time, and never fewer than one, so each package has its smoke check; the cluster package has
one test, since starting Ray is its cost. The full suite still runs every test; this only marks a subset.
Rechoose when a listed module grows slow (`python -m pytest --durations=40`).
"""

from __future__ import annotations

QUICK_MODULES = frozenset({
    "tests/core/agents/models/test_rate_limit.py",
    "tests/core/agents/test_agent_parser.py",
    "tests/core/agents/test_isolation.py",
    "tests/core/agents/test_reply_corpus.py",
    "tests/core/agents/test_vlm_agent.py",
    "tests/core/analysis/test_aggregation.py",
    "tests/core/authoring/test_authoring.py",
    "tests/core/backends/test_backends.py",
    "tests/core/cli/test_progress.py",
    "tests/core/episode/test_episode_model.py",
    "tests/core/episode/test_metrics.py",
    "tests/core/evaluation/test_profiles.py",
    "tests/core/evaluation/test_sample_log.py",
    "tests/core/evaluation/test_tasks.py",
    "tests/core/export/test_export_dataset.py",
    "tests/core/finder/test_ranking.py",
    "tests/core/finder/test_signature_bytes.py",
    "tests/core/finder/test_still_drops.py",
    "tests/core/game/external/test_ryujinx_fake.py",
    "tests/core/game/test_frames.py",
    "tests/core/game/test_physical_pad.py",
    "tests/core/labels/test_labels.py",
    "tests/core/labels/test_labels_store.py",
    "tests/core/memory/test_memory_pattern.py",
    "tests/core/memory/test_memory_readonly.py",
    "tests/core/memory/test_memory_scan.py",
    "tests/core/recording/test_missing_images.py",
    "tests/core/recording/test_recording.py",
    "tests/core/session/test_gym_env.py",
    "tests/core/session/test_protocol.py",
    "tests/core/world/test_collision.py",
    "tests/core/world/test_world_behaviour.py",
    "tests/core/world/test_world_content.py",
    "tests/studio/memory/test_candidate_marks.py",
    "tests/studio/memory/test_studio_memory.py",
    "tests/studio/replay/test_playback_clock.py",
    "tests/studio/replay/test_studio_damaged.py",
    "tests/studio/test_audio_feeder_exit.py",
    "tests/studio/test_gui_thread_gc.py",
    "tests/studio/test_human_driver.py",
    "tests/studio/test_qt_bindings.py",
    "tests/studio/test_studio_episode_cursor.py",
    "tests/studio/test_studio_help.py",
    "tests/studio/test_studio_settings_values.py",
    "tests/studio/test_studio_status_messages.py",
    "tests/studio/test_unexpected_failures.py",
    "tests/test_project.py",
})
QUICK_TESTS = frozenset({
    "tests/core/cluster/test_ray_runs.py::test_a_node_without_the_api_key_is_refused",
})
# Slow tests of quick modules, left to the full suite: pyright checks the whole project in about a minute.
NOT_QUICK_TESTS = frozenset({
    "tests/test_project.py::test_pyright_is_clean",
})


def is_quick(nodeid: str) -> bool:
    test = nodeid.split("[", 1)[0]
    if test in NOT_QUICK_TESTS:
        return False
    return nodeid.split("::", 1)[0] in QUICK_MODULES or test in QUICK_TESTS
