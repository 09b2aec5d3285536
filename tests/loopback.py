"""A loopback HTTP server that answers like a model provider (core/agents/models/loopback.py), and the reply
bodies of every provider."""

from __future__ import annotations

import threading
import time
from typing import Any

from core.agents.models.loopback import LoopbackProvider, Scripted, openai_body

__all__ = ["InFlightMeter", "LoopbackProvider", "Scripted", "anthropic_body", "gemini_body", "openai_body"]


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
    (counted on the server, where a rate limit must hold) and when each arrived."""

    def __init__(self, reply: dict[str, Any], delay_s: float = 0.3) -> None:
        self.reply, self.delay_s = reply, delay_s
        self.lock = threading.Lock()
        self.in_flight = 0
        self.most = 0
        self.arrivals: list[float] = []

    def __call__(self, request: dict[str, Any]) -> Scripted:
        with self.lock:
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)
            self.arrivals.append(time.monotonic())
        time.sleep(self.delay_s)  # the server thinking; counted as in flight until the answer leaves
        with self.lock:
            self.in_flight -= 1
        return Scripted(200, self.reply)
