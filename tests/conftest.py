"""Shared fixtures: a live built-in world, and a ground-truth reader that scans its memory."""

from __future__ import annotations

import faulthandler
import os
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from core.evaluation.locate import candidates, read_block
from core.evaluation.profile import Profile, load_profile
from core.game.builtin import BuiltinWorld
from core.memory.readers import LinuxReader
from core.paths import PROFILES_DIR
from tests.foreign import foreign_binary  # noqa: F401 - the compiled foreign C target, for memory tests


@dataclass
class GroundTruth:
    """Reads the world's state block from its memory, as the evaluator will."""

    reader: LinuxReader
    profile: Profile
    address: int

    def read(self) -> dict[str, Any]:
        return read_block(self.reader, self.profile, self.address)

    def raw(self) -> bytes:
        return self.reader.read(self.address, self.profile.block_size)

    def flags(self) -> list[str]:
        return self.profile.flag_names(self.read()["flags"])


@pytest.fixture(scope="session")
def builtin_profile() -> Profile:
    return load_profile(PROFILES_DIR / "builtin_world.yaml")


def attach_ground_truth(world: BuiltinWorld, profile: Profile) -> GroundTruth:
    reader = LinuxReader(world.pid)
    found = candidates(reader, profile)
    assert len(found) == 1, f"expected exactly one valid state block, found {len(found)}"
    return GroundTruth(reader, profile, found[0].address)


@pytest.fixture(scope="module")
def world() -> Iterator[BuiltinWorld]:
    with BuiltinWorld.launch(renderer="software") as game:
        yield game


@pytest.fixture(scope="module")
def truth(world: BuiltinWorld, builtin_profile: Profile) -> GroundTruth:
    return attach_ground_truth(world, builtin_profile)


# pytest-timeout's signal method raises only when Python code runs. A test blocked inside C (a Qt
# nested event loop, a native wait) never returns to it, and a hung run eats the whole CI budget in
# silence. This watchdog runs on its own C thread: past the limit it prints every thread's stack and
# ends the run, so a hang fails fast and says where it was.
HARD_LIMIT_S = 420
_watchdog_fd: list[int] = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    if not _watchdog_fd:  # between tests pytest's capture is suspended: fd 2 is the real stderr here
        _watchdog_fd.append(os.dup(2))
    faulthandler.dump_traceback_later(HARD_LIMIT_S, exit=True, file=_watchdog_fd[0])
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


@pytest.fixture(autouse=True)
def no_qt_leaks(request: pytest.FixtureRequest) -> Iterator[None]:
    """Qt tests must close every window they open and stop every studio thread they start."""
    if "qtbot" not in request.fixturenames:
        yield
        return
    import threading

    from PySide6.QtWidgets import QApplication

    before = {t.ident for t in threading.enumerate()}
    yield
    app = QApplication.instance()
    open_windows = [w for w in QApplication.topLevelWidgets() if w.isVisible()] if app else []
    threads = [t.name for t in threading.enumerate() if t.ident not in before and t.is_alive()
               and t.name.startswith("studio-")]
    assert not open_windows, f"test left windows open: {[type(w).__name__ for w in open_windows]}"
    assert not threads, f"test left studio threads running: {threads}"


def open_live_window(qtbot: Any) -> Any:
    """The studio's main window on a fresh built-in world, once it reports "Connected"."""
    from studio.live_session import LiveSession
    from studio.main_window import MainWindow

    session = LiveSession()
    main = MainWindow(session)
    main.setProperty("quiet", True)  # errors go to the status bar, not to modal dialogs a test cannot answer
    qtbot.addWidget(main)
    main.show()
    session.connect_world()
    qtbot.waitUntil(lambda: session.evaluator is not None and "Connected" in main.live.status.text(), timeout=60_000)
    return main


@pytest.fixture
def settings_dir(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Recordings and QSettings in the test's own folder."""
    from PySide6.QtCore import QSettings

    monkeypatch.setattr("studio.live_session.RECORDINGS_DIR", tmp_path)
    QSettings.setPath(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, str(tmp_path / "settings"))
    return tmp_path


@pytest.fixture
def live_window(qtbot: Any, settings_dir: Any) -> Iterator[Any]:
    main = open_live_window(qtbot)
    yield main
    main.close()
