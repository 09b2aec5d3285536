"""The window's status bar speaks for the tab in front: a Results message does not stay under Replay."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings

from studio.live_session import LiveSession
from studio.main_window import MainWindow


def test_a_results_message_is_shown_on_results_only(qtbot, tmp_path):
    QSettings.setPath(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, str(tmp_path / "settings"))
    main = MainWindow(LiveSession())
    main.setProperty("quiet", True)
    qtbot.addWidget(main)
    main.tabs.setCurrentWidget(main.replay)  # no world needed
    main.show()
    try:
        main.tabs.setCurrentWidget(main.results)
        with qtbot.waitSignal(main.results.sig_status, timeout=10_000, check_params_cb=_final):
            main.results.open_folder(tmp_path / "no run here")
        said = main.statusBar().currentMessage()
        assert said.startswith("Results:")
        main.tabs.setCurrentWidget(main.replay)
        assert main.statusBar().currentMessage() == ""  # Replay's view is not captioned by Results
        with qtbot.waitSignal(main.results.sig_status, timeout=10_000, check_params_cb=_final):
            main.results.open_folder(tmp_path / "nor here")  # news while another tab is in front waits
        assert main.statusBar().currentMessage() == ""
        main.tabs.setCurrentWidget(main.results)
        assert main.statusBar().currentMessage().startswith("Results:") and "nor here" in \
            main.statusBar().currentMessage()
    finally:
        main.close()


def _final(text: str) -> bool:
    return text.startswith("Results:")  # after "Loading results from …"
