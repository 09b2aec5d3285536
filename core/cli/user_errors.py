"""The last word on a command that fails: a user's mistake or a game that would not start is told in words,
never as a traceback. A bug (any other exception) still shows its traceback, so that it gets reported.

main.py asks `explain(exc)` for any exception a command lets through.
"""

from __future__ import annotations

import sys


def _user_error_types() -> tuple[type[BaseException], ...]:
    """Errors whose message is written for the user: a file that does not validate (with its line), a game that
    cannot start or died, memory that cannot be read. Imported only when a command has failed."""
    from core.agents.actions import ActionError
    from core.backends.profile import BackendFileError
    from core.evaluation.profile import ProfileError
    from core.evaluation.tasks import TaskFileError
    from core.game.errors import GameError
    from core.memory.regions import MemoryAccessError
    from core.session.episodes import BatchError
    from core.session.task_source import TaskSourceError

    return (ActionError, BackendFileError, ProfileError, TaskFileError, GameError, MemoryAccessError, BatchError,
            TaskSourceError)


def explain(exc: BaseException) -> int | None:
    """Print `error: MESSAGE` for a user-facing error and return the exit status 2; None for anything else
    (the caller re-raises it)."""
    if not isinstance(exc, _user_error_types()):
        return None
    print(f"error: {exc}", file=sys.stderr)
    return 2
