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
    """sig_reset(the first sample after the episode's reset, the evaluator sample index it was read at),
    sig_observation(step, images: {"current", "previous", "left", "right"} -> array or None),
    sig_decision(step, decision), sig_pad(pad state being held, or None when idle),
    sig_metrics(dict), sig_intervention(dict: an intervention with "status": "recorded" with its
    step; hints also "queued" / "delivered" (with "for_step") / "undelivered"), sig_step(StepRecord.to_json():
    the step's numbers, record and "position" after it; the typed record is runner.episode's last),
    sig_episode_end(result dict)."""

    def __init__(self) -> None:
        self.sig_reset = EventHook("reset")
        self.sig_observation = EventHook("observation")
        self.sig_pad = EventHook("pad")
        self.sig_decision = EventHook("decision")
        self.sig_metrics = EventHook("metrics")
        self.sig_intervention = EventHook("intervention")
        self.sig_step = EventHook("step")
        self.sig_episode_end = EventHook("episode_end")
