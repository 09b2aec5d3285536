"""The studio's log: every record goes to stderr and to a rotating file (core.paths.user_log_dir()/studio.log),
and an exception that escapes any thread is logged there with its traceback instead of vanishing.

A worker's last-resort handler logs through studio.unexpected; this module makes sure what it logs is kept.
"""

from __future__ import annotations

import logging
import sys
import threading
from logging.handlers import RotatingFileHandler
from pathlib import Path
from types import TracebackType

from core.paths import user_log_dir

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
LOG_NAME = "studio.log"
MAX_BYTES = 5 * 1024 * 1024
BACKUPS = 3

log = logging.getLogger("studio")


def configure_logging(folder: Path | None = None) -> Path | None:
    """Log INFO and above to stderr and to `folder`/studio.log (the user's log folder by default). Returns the
    log file's path, or None when it cannot be written (then stderr alone, and stderr says why)."""
    root = logging.getLogger()
    root.setLevel(logging.INFO)
    formatter = logging.Formatter(FORMAT)
    if not any(getattr(h, "pokegym", False) for h in root.handlers):
        console = _CurrentStderr()
        console.setFormatter(formatter)
        console.pokegym = True  # pyright: ignore[reportAttributeAccessIssue]  # marks our handler: configuring twice adds none
        root.addHandler(console)
    path = (folder or user_log_dir()) / LOG_NAME
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        file_handler = RotatingFileHandler(path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8")
    except OSError as exc:
        log.warning("cannot write the log file %s (%s); logging to stderr only", path, exc.strerror or exc)
        path_written = None
    else:
        file_handler.setFormatter(formatter)
        file_handler.pokegym = True  # pyright: ignore[reportAttributeAccessIssue]  # marks our handler, as above
        root.addHandler(file_handler)
        path_written = path
    install_exception_hooks()
    return path_written


class _CurrentStderr(logging.StreamHandler):  # of TextIO: it writes to sys.stderr
    """Writes to whatever sys.stderr is when a record comes (as logging's last resort does), not the stream of
    the moment it was made: a replaced stderr (a test's capture, a redirected console) still gets the records."""

    @property  # a read-only view of sys.stderr (StreamHandler's stream is an attribute)
    def stream(self) -> object:
        return sys.stderr

    @stream.setter
    def stream(self, _value: object) -> None:
        pass  # always sys.stderr


def remove_log_file_handlers() -> None:
    """Close the log files configure_logging opened (tests, and a studio that quits)."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        if isinstance(handler, RotatingFileHandler) and getattr(handler, "pokegym", False):
            root.removeHandler(handler)
            handler.close()


def install_exception_hooks() -> None:
    """Exceptions that escape a thread's run() or the main loop are logged with their traceback."""
    sys.excepthook = _log_uncaught
    threading.excepthook = _log_uncaught_in_thread


def _log_uncaught(kind: type[BaseException], value: BaseException, trace: TracebackType | None) -> None:
    if issubclass(kind, KeyboardInterrupt):
        sys.__excepthook__(kind, value, trace)
        return
    log.critical("uncaught %s", kind.__name__, exc_info=(kind, value, trace))


def _log_uncaught_in_thread(args: threading.ExceptHookArgs) -> None:
    if args.exc_value is None or issubclass(args.exc_type, SystemExit):
        return
    name = args.thread.name if args.thread is not None else "?"
    log.critical("uncaught %s in thread %s", args.exc_type.__name__, name,
                 exc_info=(args.exc_type, args.exc_value, args.exc_traceback))
