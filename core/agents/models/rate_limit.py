"""A shared limit on model requests: how many may be in flight at once, and how many may start per minute.

Fifty workers behind one API key that each back off alone on 429s only make the storm worse; so every
request of a run asks one limiter for a permit first. The bookkeeping (`PermitBook`) is written once,
with no clock or lock of its own; `LocalLimiter` wraps it for the threads of one process (the local
pool), and core/cluster/ray_limiter.py wraps the same book in a Ray actor for a cluster.

Requests per minute are spaced evenly (one start every 60/N seconds), not allowed in bursts: a burst
of N requests at the top of each minute is exactly what trips a provider's own limiter. A permit is a
lease: if its holder dies without giving it back (a killed worker), it expires after `lease_s`.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import threading
import time
from collections.abc import Generator
from dataclasses import dataclass
from typing import Protocol

NO_WAIT_HINT_S = 1.0  # how long a waiter sleeps when only a release (not the clock) can free a permit


@dataclass(frozen=True)
class RateLimits:
    """Per provider (and server): None means no limit of that kind."""

    concurrent: int | None = None
    per_minute: float | None = None

    def __post_init__(self) -> None:
        if self.concurrent is not None and self.concurrent < 1:
            raise ValueError(f"concurrent requests must be at least 1, got {self.concurrent}")
        if self.per_minute is not None and not self.per_minute > 0:
            raise ValueError(f"requests per minute must be more than 0, got {self.per_minute}")

    @property
    def active(self) -> bool:
        return self.concurrent is not None or self.per_minute is not None

    def describe(self) -> dict[str, float | int | None]:
        return {"concurrent": self.concurrent, "per_minute": self.per_minute}


class PermitBook:
    """Who holds a permit, and when the next request may start. Every method takes the time `now`
    (seconds on one monotonic clock), so the same logic serves threads and a Ray actor alike."""

    def __init__(self, limits: RateLimits) -> None:
        self.limits = limits
        self._held: dict[int, float] = {}  # permit -> when its lease runs out
        self._ids = itertools.count(1)
        self._next_start = -math.inf
        self._paused_until = -math.inf

    @property
    def in_flight(self) -> int:
        return len(self._held)

    def try_acquire(self, now: float, lease_s: float) -> tuple[int | None, float]:
        """(a permit, 0) if a request may start now; otherwise (None, seconds worth waiting before asking
        again: until the clock frees one, or NO_WAIT_HINT_S when only a release can)."""
        for permit, expiry in list(self._held.items()):
            if expiry <= now:  # its holder died or hung: the lease is taken back
                del self._held[permit]
        concurrent = self.limits.concurrent
        if concurrent is not None and len(self._held) >= concurrent:
            soonest_expiry = min(self._held.values()) - now
            return None, max(0.0, min(NO_WAIT_HINT_S, soonest_expiry))
        wait = max(self._paused_until - now, self._next_start - now if self.limits.per_minute else 0.0)
        if wait > 0:
            return None, wait
        permit = next(self._ids)
        self._held[permit] = now + lease_s
        if self.limits.per_minute:
            self._next_start = max(now, self._next_start) + 60.0 / self.limits.per_minute
        return permit, 0.0

    def release(self, permit: int) -> None:
        self._held.pop(permit, None)

    def pause(self, now: float, seconds: float) -> None:
        """The provider said "too many requests": nobody starts one for `seconds` (a shared back-off)."""
        self._paused_until = max(self._paused_until, now + seconds)

    def paused_for(self, now: float) -> float:
        return max(0.0, self._paused_until - now)


class RequestLimiter(Protocol):
    """What a model client needs from a limiter; `key` names the provider and server."""

    def permit(self, key: str, lease_s: float) -> contextlib.AbstractContextManager[None]: ...

    def back_off(self, key: str, seconds: float) -> None: ...


class LocalLimiter:
    """The limiter for the threads of one process. Every key gets the same limits."""

    def __init__(self, limits: RateLimits) -> None:
        self.limits = limits
        self._books: dict[str, PermitBook] = {}
        self._changed = threading.Condition()

    def _book(self, key: str) -> PermitBook:
        if key not in self._books:
            self._books[key] = PermitBook(self.limits)
        return self._books[key]

    @contextlib.contextmanager
    def permit(self, key: str, lease_s: float) -> Generator[None, None, None]:
        with self._changed:
            while True:
                permit, wait = self._book(key).try_acquire(time.monotonic(), lease_s)
                if permit is not None:
                    break
                self._changed.wait(wait)
        try:
            yield
        finally:
            with self._changed:
                self._book(key).release(permit)
                self._changed.notify_all()

    def back_off(self, key: str, seconds: float) -> None:
        with self._changed:
            self._book(key).pause(time.monotonic(), seconds)

    def paused_for(self, key: str) -> float:
        """Seconds until requests to `key` may start again after a 429 (0 when not paused)."""
        with self._changed:
            return self._book(key).paused_for(time.monotonic())


def limiter_key(provider: str, base_url: str | None) -> str:
    """Limits belong to an account on a server: the same provider behind another base URL is another key."""
    return f"{provider}@{base_url}" if base_url else provider
