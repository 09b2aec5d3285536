"""Replay shows what an agent heard with `--audio spectrogram`: the picture it was sent, beside the frames."""

from __future__ import annotations

import numpy as np

from core.agents.base import RandomAgent
from core.agents.observe import ObservationOptions
from core.backends.profile import load_backend
from core.evaluation.client import EvaluatorClient
from core.evaluation.tasks import load_task
from core.paths import TASKS_DIR
from core.recording.reader import EpisodeReader
from core.session.runner import EpisodeRunner, RunOptions


def test_replay_shows_the_spectrogram_the_agent_was_given(world, builtin_profile, qtbot, tmp_path):
    from PySide6.QtCore import QSettings

    from studio.live_session import LiveSession
    from studio.main_window import MainWindow

    actions = load_backend("builtin").action_set()
    task = load_task(TASKS_DIR / "q03_pier_navigation.yaml", builtin_profile.flags)
    options = RunOptions("goal_only", step_budget=3, observation=ObservationOptions(audio="spectrogram"))
    path = tmp_path / "heard.h5"
    with EvaluatorClient.launch(world.pid) as evaluator:
        evaluator.wait_locked()
        EpisodeRunner(world, evaluator, RandomAgent(actions, seed=4), actions, task, options, path).run()
    with EpisodeReader(path) as reader:
        recorded = reader.step_image("hearing", 2)
    assert recorded is not None

    QSettings.setPath(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, str(tmp_path / "settings"))
    window = MainWindow(LiveSession())
    window.setProperty("quiet", True)
    qtbot.addWidget(window)
    window.tabs.setCurrentWidget(window.replay)
    window.show()
    try:
        replay = window.replay
        with qtbot.waitSignal(replay.sig_opened, timeout=20_000):
            window.open_path(str(path))
        qtbot.waitUntil(lambda: replay.shown_index == 0, timeout=10_000)
        assert replay.observations.shown_kinds() == []  # step 1 had heard nothing yet
        replay.seek(2)
        qtbot.waitUntil(lambda: replay.shown_index == 2, timeout=10_000)
        assert replay.observations.shown_kinds() == ["hearing"]
        assert np.array_equal(replay.observations.thumbnails["hearing"].pixels, recorded)
        assert "sound heard (spectrogram)" in replay.observations.caption.text()
    finally:
        window.close()
