"""No failure is silent: an exception nobody foresaw, in a studio worker or in any thread, is logged with its
traceback on stderr and in the studio's log file, besides the one-line message the window shows."""

from __future__ import annotations

import logging
import sys
import threading
from pathlib import Path

import pytest

from studio import results_loader
from studio.logging_setup import LOG_NAME, configure_logging, remove_log_file_handlers
from studio.results_loader import ResultsLoader


@pytest.fixture
def studio_log(tmp_path, capfd):
    """The studio's logging as `python main.py` sets it up (stderr: capfd's), into a scratch folder; undone after."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    hooks = sys.excepthook, threading.excepthook
    path = configure_logging(tmp_path)
    yield path
    remove_log_file_handlers()
    for handler in list(root.handlers):
        if handler not in handlers:
            root.removeHandler(handler)
    root.setLevel(level)
    sys.excepthook, threading.excepthook = hooks


def broken_report(folder: Path) -> object:
    raise ZeroDivisionError("a bug in the report")


def test_a_worker_that_raises_is_shown_and_logged_with_its_traceback(studio_log, qtbot, tmp_path, monkeypatch, capfd):
    monkeypatch.setattr(results_loader, "build_report", broken_report)
    loader = ResultsLoader()
    failures: list[str] = []
    loader.sig_failed.connect(lambda _request, message: failures.append(message))
    with qtbot.waitSignal(loader.sig_failed, timeout=10_000):
        loader.request(tmp_path)
    loader.wait()
    assert "unexpected ZeroDivisionError: a bug in the report" in failures[0]
    assert "details in the log" in failures[0]
    stderr = capfd.readouterr().err
    logged = Path(studio_log).read_text()
    for text in (stderr, logged):
        assert "unexpected failure in building the Results report" in text
        assert "Traceback (most recent call last)" in text and 'raise ZeroDivisionError("a bug in the report")' in text


def test_an_exception_escaping_any_thread_is_logged_with_its_traceback(studio_log, capfd):
    def broken() -> None:
        raise KeyError("lost")

    thread = threading.Thread(target=broken, name="studio-test-broken")
    thread.start()
    thread.join()
    stderr = capfd.readouterr().err
    logged = Path(studio_log).read_text()
    for text in (stderr, logged):
        assert "uncaught KeyError in thread studio-test-broken" in text and "Traceback" in text


def test_the_log_file_is_in_the_user_log_folder_and_an_unwritable_one_leaves_stderr(tmp_path, monkeypatch, capfd):
    monkeypatch.setenv("POKEGYM_LOG_DIR", str(tmp_path / "logs"))
    root = logging.getLogger()
    handlers, hooks = list(root.handlers), (sys.excepthook, threading.excepthook)
    try:
        assert configure_logging() == tmp_path / "logs" / LOG_NAME
        remove_log_file_handlers()
        (tmp_path / "file").write_text("not a folder")
        assert configure_logging(tmp_path / "file") is None
        assert "cannot write the log file" in capfd.readouterr().err
    finally:
        remove_log_file_handlers()
        for handler in list(root.handlers):
            if handler not in handlers:
                root.removeHandler(handler)
        sys.excepthook, threading.excepthook = hooks
