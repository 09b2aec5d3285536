"""Issue 11: the world's life in the studio (pytest-qt, offscreen, real world and evaluator processes).
Replay starts no world; Restart returns at once and never leaves two worlds; every start-up failure
reaches the window, and Start says why it cannot run."""

from __future__ import annotations

import functools
import threading
from pathlib import Path
from typing import NoReturn

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings

from core.episode.synthetic import write_long_episode
from core.game import ipc
from core.game.child import pid_alive
from core.paths import PROFILES_DIR
from studio.app import build_studio
from studio.game_host import GameHost
from studio.live_session import LiveSession
from studio.main_window import MainWindow


@pytest.fixture
def settings(tmp_path, monkeypatch):
    QSettings.setPath(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, str(tmp_path / "settings"))
    monkeypatch.setattr("studio.live_session.RECORDINGS_DIR", tmp_path)
    return tmp_path


def connected(window) -> bool:
    return window.session.host.evaluator is not None and "Connected" in window.live.status.full_text()


def test_replay_of_a_file_starts_no_world_until_the_live_view_is_shown(qtbot, settings, tmp_path):
    episode = write_long_episode(tmp_path / "episode.h5", 20, [np.full((36, 64, 3), 9, np.uint8)] * 20)
    window = build_studio(str(episode))  # what `python main.py replay FILE` opens
    qtbot.addWidget(window)
    try:
        qtbot.waitUntil(lambda: window.replay.episode is not None, timeout=20_000)
        assert window.tabs.currentWidget() is window.replay
        assert window.session.host.keeper.launched == [] and window.session.host.world is None
        window.tabs.setCurrentWidget(window.live)  # the Live view is used: now the world starts
        qtbot.waitUntil(lambda: connected(window), timeout=60_000)
        assert len(window.session.host.keeper.launched) == 1
    finally:
        window.close()


def test_restart_returns_at_once_and_pressed_during_start_up_leaves_one_world(qtbot, settings):
    session = LiveSession()
    window = MainWindow(session)
    window.setProperty("quiet", True)
    qtbot.addWidget(window)
    window.show()  # starts the first world
    try:
        window.live.restart_world()  # pressed while it is still starting
        window.live.restart_world()
        qtbot.waitUntil(lambda: connected(window), timeout=90_000)
        current = session.host.world.pid
        qtbot.waitUntil(lambda: [pid for pid in session.host.keeper.launched if pid_alive(pid)] == [current],
                        timeout=30_000)

        window.live.restart_world()
        # Returned without waiting: the old world is closed on the keeper's thread, after this point.
        assert pid_alive(current) and session.host.world is None
        qtbot.waitUntil(lambda: connected(window) and session.host.world.pid != current, timeout=90_000)
        qtbot.waitUntil(lambda: not pid_alive(current), timeout=30_000)
        assert [pid for pid in session.host.keeper.launched if pid_alive(pid)] == [session.host.world.pid]
    finally:
        window.close()
    assert not any(pid_alive(pid) for pid in session.host.keeper.launched)


def test_a_busy_world_connection_reaches_the_window(qtbot, settings, monkeypatch):
    # The world never answers the handshake in time: the real ConnectionBusyError of core.game.ipc. The handshake
    # is held, as a game serving another client leaves a new one in its listen backlog: with only a 0 s timeout, a
    # busy machine once let the world's handshake finish first, and the evaluator's connection failed instead.
    held = threading.Event()

    def no_answer(*_args: object, **_kwargs: object) -> NoReturn:
        held.wait()
        raise ConnectionRefusedError("the test ended")

    monkeypatch.setattr("core.game.ipc.Client", no_answer)
    monkeypatch.setattr("core.game.child.ipc.connect", functools.partial(ipc.connect, timeout=0.0))
    window = MainWindow(LiveSession())
    window.setProperty("quiet", True)
    qtbot.addWidget(window)
    window.show()
    try:
        busy = "did not take the connection"  # core.game.ipc's ConnectionBusyError, as a start-up error
        qtbot.waitUntil(lambda: busy in window.live.status.full_text(), timeout=60_000)
        assert window.live.status.full_text().startswith("Could not start the built-in world")
        assert "run fewer games at once" in window.live.status.full_text()
        window.live.start()
        said = window.live.status.full_text()
        assert "Cannot start" in said and busy in said
    finally:
        window.close()
        held.set()  # the handshake threads end


def test_an_evaluator_that_fails_after_the_world_starts_is_reported_and_start_says_why(qtbot, settings, tmp_path):
    profile = tmp_path / "never_found.yaml"
    text = (PROFILES_DIR / "builtin_world.yaml").read_text()
    profile.write_text(text.replace('"50 4B 47 59 4D 5A A5 01"', '"50 4B 47 59 4D 5A A5 7F"'))
    session = LiveSession(GameHost(profile_path=profile))
    session.host.keeper.lock_timeout_s = 4.0
    window = MainWindow(session)
    window.setProperty("quiet", True)
    qtbot.addWidget(window)
    window.show()
    try:
        qtbot.waitUntil(lambda: "evaluator failed" in window.live.status.full_text(), timeout=60_000)
        assert session.host.world is not None  # the world runs (its frames show); ground truth does not
        window.live.start()
        status = window.live.status.full_text()
        assert status.startswith("Cannot start: The built-in world started, but the evaluator failed") and \
            "Restart world" in status
        assert session.runner is None and not list(Path(settings).glob("*.h5"))
    finally:
        window.close()
