"""Errors raised across the game connection, each with an actionable message."""

from __future__ import annotations


class GameError(RuntimeError):
    """Base class for every failure talking to a game."""


class GameDiedError(GameError):
    """The game process exited or stopped answering."""


class GameStartError(GameError):
    """The game process could not be started or did not become ready."""


class InvalidPadError(GameError, ValueError):
    """A pad state holds a value that cannot be sent to a controller."""


class UnknownStartStateError(GameError, KeyError):
    """A reset asked for a start state that the world does not define."""

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0]) if self.args else ""


class InvalidStartStateError(GameError, ValueError):
    """A reset gave a start state inline that the world cannot use (unknown flags, off the map, in a wall)."""


class UnsupportedCapabilityError(GameError):
    """The backend does not offer an optional capability (for example save states)."""


class RemoteGameError(GameError):
    """The game process rejected a request; the message is the game's own explanation."""
