"""A game on the user's own display (a backend with `xvfb: never`) that a window covers: the Live view says its
frames are not the game, once, and says so no more when the game is uncovered (issue 26.1)."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("pytestqt")

from core.game.external.xvfb import Xvfb
from studio.live_session import LiveSession
from studio.main_window import MainWindow
from tests.core.game.external.test_external_game import _magenta_window_over_everything
from tests.external_support import needs_x11_tools
from tests.fake_games.backends import fake_backend

pytestmark = needs_x11_tools


def test_a_covered_game_is_named_and_the_message_goes_when_it_is_uncovered(qtbot, tmp_path, monkeypatch):
    desktop = Xvfb.start("1280x720x24")
    monkeypatch.setenv("DISPLAY", desktop.display)  # the user's display, where this game must run
    backend = fake_backend(tmp_path, xvfb="never")
    window = MainWindow(LiveSession())
    window.setProperty("quiet", True)
    qtbot.addWidget(window)
    window.show()
    live = window.live
    try:
        window.choose_backend(str(backend.path))
        qtbot.waitUntil(lambda: live.session.host.world is not None, timeout=60_000)  # the game is up (its evaluator
        # never locks here: the fake game has no state block, and the cover check needs none)
        with _magenta_window_over_everything(desktop.display):
            qtbot.waitUntil(lambda: "Frames are not the game" in live.status.full_text(), timeout=5_000)
            assert "'Studio' covers the game's window" in live.status.full_text()
        qtbot.waitUntil(lambda: live.frames_hidden_reason is None, timeout=5_000)  # seen uncovered
        closing = time.monotonic()
        window.close()  # while its evaluator still scans (the fake game has no state block): quits at once
        assert time.monotonic() - closing < 15, "quitting waited for the evaluator's lock timeout (60 s)"
    finally:
        window.close()
        desktop.stop()
