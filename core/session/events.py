"""EventHook: callbacks connected to a named event, called on the emitting thread (named apart from Qt's Signal).

The studio connects bound slots and re-emits into the GUI thread itself; core stays Qt-free.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class EventHook:
    """The callbacks of one named event; `emit` calls them in the order they connected."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._callbacks: list[Callable[..., Any]] = []
        self._lock = threading.Lock()

    def connect(self, callback: Callable[..., Any]) -> None:
        with self._lock:
            self._callbacks.append(callback)

    def disconnect(self, callback: Callable[..., Any]) -> None:
        with self._lock:
            self._callbacks.remove(callback)

    def emit(self, *args: Any) -> None:
        with self._lock:
            callbacks = list(self._callbacks)
        for callback in callbacks:
            callback(*args)


class RunnerEvents:
    """What happens inside a step that the Episode does not hold: sig_reset(the first sample after the
    episode's reset, the evaluator sample index it was read at), sig_observation(step, images: {"current",
    "previous", "left", "right"} -> array or None), sig_decision(step, decision), sig_intervention(an
    InterventionProgress: recorded with its step; hints also queued / delivered; undelivered). Steps, metrics
    and the result are the runner's Episode's (subscribe to it); the pad being held is the game wrapper's to
    observe (the studio's ObservedGame)."""

    def __init__(self) -> None:
        self.sig_reset = EventHook("reset")
        self.sig_observation = EventHook("observation")
        self.sig_decision = EventHook("decision")
        self.sig_intervention = EventHook("intervention")
