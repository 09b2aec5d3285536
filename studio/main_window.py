"""The studio's top-level window: the views as tabs, the menus, and versioned settings."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSettings, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMainWindow, QMessageBox, QTabWidget

from studio.human_control import KEY_HELP
from studio.live_session import LiveSession
from studio.live_view import ACTIONS, LiveView

SETTINGS_VERSION = 2


def studio_settings() -> QSettings:
    return QSettings("PokeGym", "Studio")


class MainWindow(QMainWindow):
    def __init__(self, session: LiveSession) -> None:
        super().__init__()
        self.setWindowTitle("PokeGym Studio")
        self.resize(1500, 900)
        self.live = LiveView(session)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.live, "Live")
        self.setCentralWidget(self.tabs)
        help_menu = self.menuBar().addMenu("&Help")
        shortcuts = QAction("Keyboard shortcuts", self)
        shortcuts.triggered.connect(self.show_shortcuts)
        help_menu.addAction(shortcuts)
        self._restore_settings()

    @property
    def session(self) -> LiveSession:
        return self.live.session

    def shortcut_rows(self) -> list[tuple[str, str]]:
        rows = [(shortcut, f"{name}: {tip}") for name, shortcut, tip in ACTIONS]
        rows += [(keys, f"while you have control: {what}") for keys, what in KEY_HELP]
        return rows

    @Slot()
    def show_shortcuts(self) -> None:
        text = "\n".join(f"{keys}\t{what}" for keys, what in self.shortcut_rows())
        QMessageBox.information(self, "Keyboard shortcuts", text)

    def _restore_settings(self) -> None:
        settings = studio_settings()
        if int(settings.value("version", 0)) != SETTINGS_VERSION:
            return  # settings from another layout version: start from the defaults rather than misapply them
        geometry = settings.value("geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        self.live.restore_settings(settings)

    def closeEvent(self, event: Any) -> None:
        settings = studio_settings()
        settings.setValue("version", SETTINGS_VERSION)
        settings.setValue("geometry", self.saveGeometry())
        self.live.save_settings(settings)
        self.live.shut_down()
        super().closeEvent(event)
