"""What the Live view's status bar says about the evaluator and about errors, decided without Qt.

The view's slots only show what these functions return: the evaluator's state as a sentence, and an error
by its kind (carried from where the exception was caught, never guessed from its wording).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from core.game.errors import GameDiedError

ErrorKind = Literal["world_died", "error"]
RESTART_HINT = " Use Restart world (Ctrl+Shift+R) to start a new one."


@dataclass(frozen=True)
class StatusLine:
    text: str
    error: bool = False
    about_evaluator: bool = False  # a later "found again" only follows a line about the evaluator


def error_kind(exc: BaseException) -> ErrorKind:
    """The kind of a caught exception: a dead game is the one the user can fix with Restart world."""
    return "world_died" if isinstance(exc, GameDiedError) else "error"


def describe_error(message: str, kind: str) -> StatusLine:
    """The first line of an error, with the way out when the world died."""
    hint = RESTART_HINT if kind == "world_died" else ""
    return StatusLine(f"{message.splitlines()[0] if message else 'unknown error'}{hint}", error=True)


def describe_evaluator(previous: str, status: Mapping[str, Any], world_running: bool,
                       last_about_evaluator: bool) -> StatusLine | None:
    """The sentence for an evaluator state that changed from `previous` (None: nothing new to say).
    `last_about_evaluator`: the status bar's current line is one of these (so a recovery may follow it)."""
    state = str(status.get("state"))
    if state == previous:
        return None
    message = status.get("message")
    if state in ("failed", "disconnected"):
        return StatusLine(f"Evaluator stopped: {message or 'no reason given'}. Ground truth is unavailable; "
                          "Restart world (Ctrl+Shift+R) starts a fresh pair.", error=True, about_evaluator=True)
    if state == "ambiguous" and world_running:
        return StatusLine(f"Evaluator: {message}", error=True, about_evaluator=True)
    if state in ("lost", "scanning") and world_running:
        return StatusLine(f"Evaluator: {message or 'searching for the state block'} (it rescans by itself)",
                          about_evaluator=True)
    if state == "locked" and last_about_evaluator:
        return StatusLine("Evaluator: state block found again.", about_evaluator=True)
    return None
