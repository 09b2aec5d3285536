"""The run's shared request limit on a Ray cluster: one actor hands out permits to every worker, with the same
bookkeeping as the local pool's limiter (core/agents/models/rate_limit.py, PermitBook)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Generator
from typing import Protocol

import ray

from core.agents.models.rate_limit import PermitBook, RateLimits
from core.cluster.ray_typed import ActorMethod


@ray.remote(num_cpus=0)
class LimiterActor:
    """An async actor: a caller waiting for a permit costs no thread, only a suspended coroutine."""

    def __init__(self, limits: RateLimits) -> None:
        self.limits = limits
        self.books: dict[str, PermitBook] = {}
        self.released: asyncio.Event | None = None

    def _book(self, key: str) -> PermitBook:
        return self.books.setdefault(key, PermitBook(self.limits))

    async def acquire(self, key: str, lease_s: float) -> int:
        if self.released is None:
            self.released = asyncio.Event()
        while True:
            permit, wait = self._book(key).try_acquire(time.monotonic(), lease_s)
            if permit is not None:
                return permit
            self.released.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.released.wait(), timeout=wait)

    async def release(self, key: str, permit: int) -> None:
        self._book(key).release(permit)
        if self.released is not None:
            self.released.set()

    async def back_off(self, key: str, seconds: float) -> None:
        self._book(key).pause(time.monotonic(), seconds)

    async def in_flight(self, key: str) -> int:
        return self._book(key).in_flight


class LimiterHandle(Protocol):
    """A LimiterActor's handle, as Ray hands it out: each method is called with .remote()."""

    acquire: ActorMethod[[str, float], int]
    release: ActorMethod[[str, int], None]
    back_off: ActorMethod[[str, float], None]
    in_flight: ActorMethod[[str], int]


class RayLimiter:
    """A RequestLimiter for model clients on any node: each request holds a permit from the run's actor."""

    def __init__(self, actor: LimiterHandle) -> None:
        self.actor = actor

    @contextlib.contextmanager
    def permit(self, key: str, lease_s: float) -> Generator[None, None, None]:
        permit = ray.get(self.actor.acquire.remote(key, lease_s))
        try:
            yield
        finally:
            ray.get(self.actor.release.remote(key, permit))

    def back_off(self, key: str, seconds: float) -> None:
        self.actor.back_off.remote(key, seconds)
