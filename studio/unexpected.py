"""A worker's last resort: an exception nobody foresaw is logged with its traceback (stderr and the log file,
studio.logging_setup) and turned into one line for the window. No failure is only a message, and none is silent."""

from __future__ import annotations

import logging

log = logging.getLogger("studio.unexpected")


def unexpected(where: str, exc: BaseException) -> str:
    """Log `exc` with its traceback as a failure in `where` (e.g. "the memory finder's search"), and return the
    message the window shows."""
    log.error("unexpected failure in %s", where, exc_info=exc)
    return f"unexpected {type(exc).__name__}: {exc} (details in the log)"
