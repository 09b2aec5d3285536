"""The one error the scaffold raises: its message is one line that says what to try."""

from __future__ import annotations


class ScaffoldError(Exception):
    """Something the user can fix: the message names it and what to try."""
