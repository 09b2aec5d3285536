"""Issue 11, point 15: Help → Keyboard shortcuts fits a 1280×720 screen as a two-column table that scrolls."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QDialogButtonBox

from studio.live_session import LiveSession
from studio.main_window import MainWindow


def test_keyboard_shortcuts_fit_a_720p_screen_in_a_scrolling_two_column_table(qtbot, tmp_path):
    QSettings.setPath(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, str(tmp_path / "settings"))
    main = MainWindow(LiveSession())
    qtbot.addWidget(main)
    main.tabs.setCurrentWidget(main.replay)  # no world needed
    main.show()
    try:
        help_menu = next(a.menu() for a in main.menuBar().actions() if a.text() == "&Help")
        next(a for a in help_menu.actions() if a.text() == "Keyboard shortcuts").trigger()
        dialog = main.shortcuts_dialog
        qtbot.waitUntil(dialog.isVisible, timeout=5_000)
        assert QApplication.activeModalWidget() is None  # it does not block the window
        rows = main.shortcut_rows()
        table = dialog.table
        assert table.columnCount() == 2 and table.rowCount() == len(rows) > 40
        assert [table.item(0, c).text() for c in range(2)] == list(rows[0])
        assert dialog.width() <= 1280 and dialog.frameGeometry().height() <= 720 - 40
        assert table.verticalScrollBar().maximum() > 0  # more rows than fit: the table scrolls
        assert not table.horizontalScrollBar().isVisible()
        dialog.buttons.button(QDialogButtonBox.StandardButton.Close).click()  # closes without a title bar
        qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=5_000)
        assert main.isVisible()
    finally:
        main.close()
    assert not dialog.isVisible()
