"""A loopback HTTP server that answers like a model provider (core/agents/models/loopback.py), and the reply
bodies of every provider."""

from __future__ import annotations

import threading
import time
from typing import Any

from core.agents.models.loopback import LoopbackProvider, Scripted, openai_body

__all__ = ["InFlightMeter", "LoopbackProvider", "RequestBucket", "Scripted", "anthropic_body", "gemini_body",
           "openai_body"]


def anthropic_body(text: str | None) -> dict[str, Any]:
    content = [{"type": "text", "text": text}] if text is not None else []
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6", "content": content,
            "stop_reason": "end_turn", "stop_sequence": None, "usage": {"input_tokens": 812, "output_tokens": 40}}


def gemini_body(text: str | None) -> dict[str, Any]:
    parts = [{"text": text}] if text is not None else []
    return {"candidates": [{"content": {"parts": parts, "role": "model"}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 812, "candidatesTokenCount": 40, "totalTokenCount": 852},
            "modelVersion": "gemini-3-pro-preview"}


class InFlightMeter:
    """A responder that takes `delay_s` to answer each request and records how many were in flight at once
    (counted on the server, where a rate limit must hold) and when each arrived.

    company_s > 0: until two requests have been in flight together, a request waits up to that long for a
    second one before it is answered. A test that a limit of two lets two through then does not depend on
    episodes happening to overlap (on a loaded machine they may start one after another); a limit of one
    still shows as one, after the wait."""

    def __init__(self, reply: dict[str, Any], delay_s: float = 0.3, company_s: float = 0.0) -> None:
        self.reply, self.delay_s, self.company_s = reply, delay_s, company_s
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)
        self.in_flight = 0
        self.most = 0
        self.arrivals: list[float] = []

    def __call__(self, request: dict[str, Any]) -> Scripted:
        with self.lock:
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)
            self.arrivals.append(time.monotonic())
            self.changed.notify_all()
            if self.company_s > 0:
                self.changed.wait_for(lambda: self.most >= 2, timeout=self.company_s)
        time.sleep(self.delay_s)  # the server thinking; counted as in flight until the answer leaves
        with self.lock:
            self.in_flight -= 1
        return Scripted(200, self.reply)


class RequestBucket:
    """A responder that enforces a requests-per-minute limit the way providers do: a bucket refilled at
    `per_minute` / 60 requests a second and holding at most `burst`; a request finding it empty gets a 429.
    (A count over a whole trailing minute would never be reached in a test of seconds by a client that
    spaces its requests.)"""

    def __init__(self, reply: dict[str, Any], per_minute: float, burst: float = 2.0) -> None:
        self.reply, self.rate, self.burst = reply, per_minute / 60.0, burst
        self.lock = threading.Lock()
        self.tokens = burst
        self.refilled = time.monotonic()
        self.refused = 0

    def __call__(self, request: dict[str, Any]) -> Scripted:
        with self.lock:
            now = time.monotonic()
            self.tokens = min(self.burst, self.tokens + (now - self.refilled) * self.rate)
            self.refilled = now
            if self.tokens < 1.0:
                self.refused += 1
                return Scripted(429, {"error": {"message": "rate limit reached for requests per minute",
                                                "type": "requests", "code": "rate_limit_exceeded"}})
            self.tokens -= 1.0
        return Scripted(200, self.reply)
