"""Shared fixtures: a live built-in world, and a ground-truth reader that scans its memory."""

from __future__ import annotations

import atexit
import faulthandler
import gc
import os
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from core.evaluation.locate import candidates, read_block
from core.evaluation.profile import Profile, load_profile
from core.game.builtin import BuiltinWorld
from core.memory.readers import LinuxReader
from core.paths import PROFILES_DIR
from tests.foreign import (
    foreign_binary,  # noqa: F401 - the compiled foreign C target, for memory tests
    ring_binary,  # noqa: F401 - the many-copies C target, for memory tests
)
from tests.quick_subset import is_quick
from tests.scheduling import LongestFirst

# No test reads or changes the user's studio settings, in this process or in a studio it starts: Qt looks for
# them under XDG_CONFIG_HOME. (A test that checks settings also gets a folder of its own: settings_dir.)
_CONFIG_HOME = tempfile.mkdtemp(prefix="pokegym-test-config-")
os.environ["XDG_CONFIG_HOME"] = _CONFIG_HOME
atexit.register(shutil.rmtree, _CONFIG_HOME, ignore_errors=True)
# Nor the user's own PokeGym folder (authored tasks): core.paths.user_data_dir() reads POKEGYM_HOME.
_USER_HOME = tempfile.mkdtemp(prefix="pokegym-test-home-")
os.environ["POKEGYM_HOME"] = _USER_HOME
atexit.register(shutil.rmtree, _USER_HOME, ignore_errors=True)
# Nor the user's cache (core.paths.user_cache_dir(): the worlds' sound banks); the session's worlds share this one.
_CACHE = tempfile.mkdtemp(prefix="pokegym-test-cache-")
os.environ["POKEGYM_CACHE_DIR"] = _CACHE
atexit.register(shutil.rmtree, _CACHE, ignore_errors=True)
# Several tests press Ctrl+C on a world or a run they started (SIGINT). A suite started in the background by a
# shell (`cmd &`, nohup) inherits SIGINT ignored, and so would every program it starts, which would then sit
# through the Ctrl+C those tests send (three of them waited 60 s and failed that way). A terminal's default,
# which exec passes on to children as "default", whoever started the suite:
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


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


# The module whose tests run now in this process, for pytest_runtest_setup below.
_current_module: list[str] = []


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """At each module's first test (the last module's fixtures are torn down by then): collect, then freeze what
    is left. What outlives a module (imported libraries, caches, session fixtures: 350,000 to 630,000 objects in a
    worker) lives as long as the process, and a full collection walked all of it again each time: 0.2 to 0.4 s,
    after every test that can open a window (see no_leaks). Frozen, a collection walks only what came since."""
    module = item.nodeid.split("::", 1)[0]
    if _current_module != [module]:
        _current_module[:] = [module]
        gc.collect()
        gc.freeze()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:  # `-m quick`: the subset tests/quick_subset.py names
        if is_quick(item.nodeid):
            item.add_marker(pytest.mark.quick)


@pytest.hookimpl(optionalhook=True)  # xdist's hooks: unknown when it is off (-p no:xdist)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto`: one worker per core and two more. Workers spend much of their time waiting: on games that run in
    real time (Minetest, with the Minetest modules on one worker: tests/scheduling.py), on Ray's episodes, on the
    subprocesses of command-line tests. Measured on 2 cores on 2026-12-07: two workers kept the cores 143% busy
    (12 min 27 s), three 171% (10 min 1 s by the end of the day), four 179% (9 min 28 s the same hour).
    PYTEST_XDIST_AUTO_NUM_WORKERS still sets the number (xdist's own hook reads it)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cores + 2


@pytest.hookimpl(optionalhook=True)  # xdist's hooks: unknown when it is off (-p no:xdist)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> LongestFirst | None:
    """Modules longest first, Minetest's on one worker (tests/scheduling.py says why)."""
    return LongestFirst(config, log) if config.getoption("dist") == "loadscope" else None


# pytest-timeout's signal method raises only when Python code runs. A test blocked inside C (a Qt
# nested event loop, a native wait) never returns to it, and a hung run eats the whole CI budget in
# silence. This watchdog runs on its own C thread: past the limit it prints every thread's stack and
# ends the run, so a hang fails fast and says where it was.
HARD_LIMIT_S = 420
_watchdog_fd: list[int] = []


def hard_limit_s(item: pytest.Item) -> float:
    """HARD_LIMIT_S, or more for a test whose own timeout marker allows more (a module's shared session, started
    by its first test: the Memory tab on Minetest allows 1200 s, and the watchdog once ended it at 420 under load):
    the watchdog catches hangs, pytest-timeout's limit stays the test's."""
    marker = item.get_closest_marker("timeout")
    if marker is None:
        return HARD_LIMIT_S
    allowed = marker.args[0] if marker.args else marker.kwargs.get("timeout")
    return max(HARD_LIMIT_S, float(allowed) + 60.0) if allowed else HARD_LIMIT_S


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    if not _watchdog_fd:  # between tests pytest's capture is suspended: fd 2 is the real stderr here
        _watchdog_fd.append(os.dup(2))
    faulthandler.dump_traceback_later(hard_limit_s(item), exit=True, file=_watchdog_fd[0])
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


# Threads that libraries start on first use and keep for the life of the process, by name prefix. Each is
# the library's own pool or service, not ours to stop; anything else a test leaves running is a leak.
LONG_LIVED_THREADS: dict[str, str] = {
}
# A thread a test stopped may still be finishing its last lines (closing a socket, a process's pipes at EOF).
THREAD_GRACE_S = 5.0


def _leaked_threads(before: set[int | None]) -> list[threading.Thread]:
    """Threads started during the test that are still running after THREAD_GRACE_S (waited on, not slept)."""
    deadline = time.monotonic() + THREAD_GRACE_S
    leaked = []
    for thread in threading.enumerate():
        if thread.ident in before or thread is threading.current_thread():
            continue
        if any(thread.name.startswith(prefix) for prefix in LONG_LIVED_THREADS):
            continue
        thread.join(max(0.0, deadline - time.monotonic()))
        if thread.is_alive():
            leaked.append(thread)
    return leaked


@pytest.fixture(autouse=True)
def no_leaks(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every test stops every thread it starts; Qt tests also close every window they open.

    Threads of module- and session-scoped fixtures (a shared world's stderr pump) start before this
    function-scoped fixture and are not the test's."""
    before = {t.ident for t in threading.enumerate()}
    yield
    if "qtbot" in request.fixturenames:
        from PySide6.QtWidgets import QApplication

        app = QApplication.instance()
        open_windows = [w for w in QApplication.topLevelWidgets() if w.isVisible()] if app else []
        assert not open_windows, f"test left windows open: {[type(w).__name__ for w in open_windows]}"
    if request.node.get_closest_marker("threads_owned_by_shared_session") is None:
        # (a module-scoped session that restarted its game here owns its new threads: checked at its end)
        leaked = _leaked_threads(before)
        assert not leaked, f"test left threads running: {[f'{t.name} (daemon={t.daemon})' for t in leaked]}"
    if not gc.isenabled():
        # The studio collects cycles on the GUI thread only (studio/gui_thread_gc.py), on a timer that runs
        # only while an event loop does: collect this test's windows here, before the next test's workers run.
        # A full collection walks the whole heap (up to 0.4 s in a worker that has run the long modules), so
        # only a test that can open a window pays it; any other collects what is due, as automatic collection
        # would (collecting fully after every test made 226 one-millisecond tests take 93 s after a studio test).
        if {"qtbot", "qapp"} & set(request.fixturenames):
            gc.collect()
        else:
            from studio.gui_thread_gc import collect_due

            collect_due()


def assert_no_threads_left(before: set[int | None]) -> None:
    """For a shared (module-scoped) session's own teardown: every thread started since `before` has ended."""
    leaked = _leaked_threads(before)
    assert not leaked, f"the shared session left threads running: {[t.name for t in leaked]}"


def open_live_window(qtbot: Any) -> Any:
    """The studio's main window on a fresh built-in world, once it reports "Connected"."""
    from studio.live_session import LiveSession
    from studio.main_window import MainWindow

    session = LiveSession()
    main = MainWindow(session)
    main.setProperty("quiet", True)  # errors go to the status bar, not to modal dialogs a test cannot answer
    qtbot.addWidget(main)
    main.show()
    session.host.connect()
    qtbot.waitUntil(lambda: session.host.evaluator is not None and "Connected" in main.live.status.full_text(),
                    timeout=60_000)
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


def run_episode_to_end(session: Any, qtbot: Any, choices: Any, timeout_ms: int = 90_000) -> Any:
    """Start an episode as the Start button does and wait for its end. A refused start fails at once
    with the session's message; an episode that never ends fails with where its thread is stuck."""
    import sys
    import traceback

    ends: list[dict[str, Any]] = []
    errors: list[str] = []
    session.sig_episode_end.connect(ends.append)
    session.sig_error.connect(errors.append)
    session.host.sig_problem.connect(lambda message, _kind: errors.append(message))
    session.start_episode(choices)
    try:
        qtbot.waitUntil(lambda: bool(ends) or (bool(errors) and not session.busy), timeout=timeout_ms)
    except Exception as exc:
        runner = session.runner
        stacks = [f"thread {t.name}:\n" + "".join(traceback.format_stack(sys._current_frames()[t.ident]))
                  for t in __import__("threading").enumerate() if t.name.startswith("studio-drive") and t.ident]
        raise AssertionError(f"the episode did not end: step {getattr(runner, 'step', None)}, "
                             f"errors {errors}\n" + "\n".join(stacks)) from exc
    assert ends, f"the episode did not start: {errors}"
    return ends[0]



class StepsSoFar(Sequence[dict[str, Any]]):
    """The running episode's steps as the runner records them (StepRecord.to_json()), read from the Episode
    the Live panes show: what a test would otherwise collect from a step signal."""

    def __init__(self, session: Any) -> None:
        self.session = session

    def _records(self) -> list[Any]:
        runner = self.session.runner
        return [] if runner is None else runner.episode.steps()

    def __len__(self) -> int:
        return len(self._records())

    def __getitem__(self, index: Any) -> Any:
        picked = self._records()[index]
        return [r.to_json() for r in picked] if isinstance(index, slice) else picked.to_json()
