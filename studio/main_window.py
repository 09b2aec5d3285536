"""The studio's top-level window: the views as tabs, the menus, drag and drop, and versioned settings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QSettings, Qt, QTimer, Slot
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QApplication, QFileDialog, QMainWindow, QMenu, QMessageBox, QTabWidget

from core.backends.profile import BACKENDS_DIR, BackendFileError, known_backends, load_backend
from core.paths import RECORDINGS_DIR
from studio.gui_thread_gc import collect_on_gui_thread_only
from studio.human_control import KEY_HELP
from studio.live_session import LiveSession
from studio.live_toolbar import ACTIONS
from studio.live_view import LiveView
from studio.memory.memory_view import MemoryView
from studio.replay.keymap import REPLAY_KEYS, load_keys, save_keys
from studio.replay.keys_dialog import KeysDialog
from studio.replay.replay_view import ReplayView
from studio.results_view import ResultsView
from studio.shortcuts_dialog import ShortcutsDialog

SETTINGS_VERSION = 2
RECENT_LIMIT = 10


def studio_settings() -> QSettings:
    return QSettings("PokeGym", "Studio")


PREFERRED_SIZE = (1500, 900)


class MainWindow(QMainWindow):
    def __init__(self, session: LiveSession) -> None:
        super().__init__()
        collect_on_gui_thread_only()  # a closed window must never be destroyed on a worker thread
        self.setWindowTitle("PokeGym Studio")
        self.resize(*PREFERRED_SIZE)
        self.setAcceptDrops(True)
        self.live = LiveView(session)
        self.replay = ReplayView()
        self.results = ResultsView()
        self.memory = MemoryView(session.host)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.live, "Live")
        self.tabs.addTab(self.replay, "Replay")
        self.tabs.addTab(self.results, "Results")
        self.tabs.addTab(self.memory, "Memory")
        self.setCentralWidget(self.tabs)
        self.recent_menu = QMenu("Open &recent", self)
        self.shortcuts_dialog: ShortcutsDialog | None = None
        self._build_menus()
        self.live.sig_open_in_replay.connect(self.open_path)
        self.replay.sig_opened.connect(self._remember_later)
        self.replay.sig_open_failed.connect(self.statusBar().showMessage)
        self.results.sig_status.connect(self._show_results_status)
        self._results_status = ""
        self.tabs.currentChanged.connect(self._on_tab_changed)
        self._restore_settings()

    def fit_to_screen(self) -> None:
        """Never larger than the screen's free area (a laptop's 1280x720, or a saved size from a bigger screen):
        a window manager may not shrink it, and without one the panels past the edge are simply cut off."""
        screen = self.screen() or QApplication.primaryScreen()
        if screen is None:
            return
        room = screen.availableGeometry()
        width, height = min(self.width(), room.width()), min(self.height(), room.height())
        if (width, height) != (self.width(), self.height()):
            self.resize(width, height)
            self.move(room.topLeft())

    @Slot(str)
    def _show_results_status(self, text: str) -> None:
        # the window's status bar speaks for the tab in front: Results' news waits until it is shown
        self._results_status = text
        if self.tabs.currentWidget() is self.results:
            self.statusBar().showMessage(text)

    @Slot(int)
    def _on_tab_changed(self, _index: int) -> None:
        self.statusBar().clearMessage()  # one tab's message never stays under another's view
        if self.tabs.currentWidget() is self.results and self._results_status:
            self.statusBar().showMessage(self._results_status)

    @property
    def session(self) -> LiveSession:
        return self.live.session

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        for text, shortcut, slot in (("&Open recording…", "Ctrl+O", self.choose_recording),
                                     ("Open &folder…", "Ctrl+Shift+O", self.choose_folder)):
            action = QAction(text, self)
            action.setShortcut(QKeySequence(shortcut))
            action.triggered.connect(slot)
            file_menu.addAction(action)
        file_menu.addMenu(self.recent_menu)
        file_menu.addSeparator()
        quit_action = QAction("&Quit", self)
        quit_action.setShortcut(QKeySequence("Ctrl+Q"))
        quit_action.triggered.connect(self.close)
        file_menu.addAction(quit_action)
        self._build_game_menu()
        settings_menu = self.menuBar().addMenu("&Settings")
        keys = QAction("Replay &keys…", self)
        keys.triggered.connect(self.edit_replay_keys)
        settings_menu.addAction(keys)
        help_menu = self.menuBar().addMenu("&Help")
        shortcuts = QAction("Keyboard shortcuts", self)
        shortcuts.triggered.connect(self.show_shortcuts)
        help_menu.addAction(shortcuts)

    def _build_game_menu(self) -> None:
        """Which game the Live view drives: the built-in world, an external backend, or a backend file."""
        menu = self.menuBar().addMenu("&Game")
        self.game_actions = QActionGroup(self)
        current = self.session.host.backend.name
        for name in known_backends():
            title = load_backend(name).title if name != "builtin" else "Built-in world (Harborvale)"
            action = QAction(title, self, checkable=True)
            action.setChecked(name == current)
            action.setData(name)
            action.triggered.connect(lambda _checked=False, n=name: self.choose_backend(n))
            self.game_actions.addAction(action)
            menu.addAction(action)
        menu.addSeparator()
        other = QAction("Backend &file…", self)
        other.triggered.connect(self.choose_backend_file)
        menu.addAction(other)

    @Slot()
    def choose_backend_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Choose a backend file", str(BACKENDS_DIR), "Backends (*.yaml)")
        if path:
            self.choose_backend(path)

    def choose_backend(self, name_or_path: str) -> None:
        try:
            backend = load_backend(name_or_path)
        except BackendFileError as exc:
            self.statusBar().showMessage(str(exc).splitlines()[0])
            if not self.property("quiet"):
                QMessageBox.warning(self, "PokeGym Studio", str(exc))
            return
        for action in self.game_actions.actions():
            action.setChecked(action.data() == backend.name)
        self.tabs.setCurrentWidget(self.live)
        self.live.switch_backend(backend)

    # -- opening ------------------------------------------------------------------------------------
    @Slot(str)
    def open_path(self, path: str) -> None:
        """An episode file opens in Replay; a folder opens as Replay's episode list, and a run folder
        (one with results.jsonl) also opens in Results, which is then shown."""
        target = Path(path)
        self.tabs.setCurrentWidget(self.replay)
        if target.is_dir():
            self.replay.open_folder(str(target))
            if (target / "results.jsonl").exists():
                self.results.open_folder(target)
                self.tabs.setCurrentWidget(self.results)
            self._remember(str(target))
        else:
            self.replay.open_episode(str(target))

    @Slot()
    def choose_recording(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open recording", str(RECORDINGS_DIR), "Episodes (*.h5)")
        if path:
            self.open_path(path)

    @Slot()
    def choose_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open a folder of episodes", str(RECORDINGS_DIR))
        if path:
            self.open_path(path)

    def recent(self) -> list[str]:
        value = studio_settings().value("recent", [])
        items = [value] if isinstance(value, str) else list(value) if isinstance(value, (list, tuple)) else []
        return [str(item) for item in items][:RECENT_LIMIT]

    @Slot(str)
    def _remember_later(self, path: str) -> None:
        """Settings are written to disk: not in the same turn of the event loop as opening an episode."""
        QTimer.singleShot(50, self, lambda: self._remember(path))  # not after the window is gone

    @Slot(str)
    def _remember(self, path: str) -> None:
        items = [path] + [p for p in self.recent() if p != path]
        studio_settings().setValue("recent", items[:RECENT_LIMIT])
        self._fill_recent()

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        for path in self.recent():
            action = self.recent_menu.addAction(path)
            action.triggered.connect(lambda _checked=False, p=path: self.open_path(p))
        self.recent_menu.setEnabled(bool(self.recent()))

    def dragEnterEvent(self, event: Any) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event: Any) -> None:
        for url in event.mimeData().urls():
            if url.isLocalFile():
                self.open_path(url.toLocalFile())
                event.acceptProposedAction()
                return

    # -- keys and help ---------------------------------------------------------------------------------
    @Slot()
    def edit_replay_keys(self) -> None:
        settings = studio_settings()
        dialog = KeysDialog(load_keys(settings), self)
        if dialog.exec():
            save_keys(settings, dialog.keys())
            self.replay.apply_keys(dialog.keys())

    def shortcut_rows(self) -> list[tuple[str, str]]:
        rows = [(shortcut, f"Live — {name}: {tip}") for name, shortcut, tip in ACTIONS]
        rows += [(keys, f"Live, between episodes or with Take control: {what}") for keys, what in KEY_HELP]
        keys = load_keys(studio_settings())
        rows += [(keys[name].toString(), f"Replay — {description}") for name, (_, description) in REPLAY_KEYS.items()]
        rows += [("Ctrl+O / Ctrl+Shift+O", "open a recording / a folder"), ("Ctrl+Q", "quit")]
        return rows

    @Slot()
    def show_shortcuts(self) -> None:
        if self.shortcuts_dialog is None:
            self.shortcuts_dialog = ShortcutsDialog(self.shortcut_rows(), self)
        self.shortcuts_dialog.show()
        self.shortcuts_dialog.raise_()

    # -- settings ---------------------------------------------------------------------------------------
    def _restore_settings(self) -> None:
        settings = studio_settings()
        self._fill_recent()
        if str(settings.value("version", 0)) != str(SETTINGS_VERSION):
            self.fit_to_screen()
            return  # settings from another layout version: start from the defaults rather than misapply them
        geometry = settings.value("geometry")
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        self.fit_to_screen()
        self.live.restore_settings(settings)
        self.replay.restore_settings(settings)

    def closeEvent(self, event: Any) -> None:
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)  # a slow disk may take a while to finish saving
        try:
            unsaved = self.replay.labels.flush()
        finally:
            QApplication.restoreOverrideCursor()
        if unsaved and not self.property("quiet") and QMessageBox.question(
                self, "PokeGym Studio", "These labels could not be saved:\n\n" + "\n".join(unsaved)
                + "\n\nClose anyway and lose them? (No keeps the studio open: fix the cause, then quit again; "
                "every unsaved label is tried once more first.)",
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                QMessageBox.StandardButton.No) != QMessageBox.StandardButton.Yes:
            event.ignore()
            return
        settings = studio_settings()
        settings.setValue("version", SETTINGS_VERSION)
        settings.setValue("geometry", self.saveGeometry())
        self.live.save_settings(settings)
        self.replay.save_settings(settings)
        self.live.shut_down()
        self.replay.shut_down()
        self.results.shut_down()
        self.memory.shut_down()
        if self.shortcuts_dialog is not None:
            self.shortcuts_dialog.close()
        super().closeEvent(event)
