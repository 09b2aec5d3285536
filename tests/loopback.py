"""A loopback HTTP server that answers like a model provider: scripted replies, recorded requests."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Scripted:
    status: int = 200
    body: Any = None            # dict -> JSON; str -> raw text
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


class LoopbackProvider:
    """Answers with the scripted replies in order; once they run out, with `responder(request)` if set."""

    def __init__(self, responder: Callable[[dict[str, Any]], Scripted] | None = None) -> None:
        self.replies: deque[Scripted] = deque()
        self.requests: list[dict[str, Any]] = []
        self.responder = responder
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = self.rfile.read(length)
                request = {"path": self.path, "headers": dict(self.headers), "body": json.loads(body) if body else None}
                provider.requests.append(request)
                if provider.replies:
                    reply = provider.replies.popleft()
                elif provider.responder is not None:
                    reply = provider.responder(request)
                else:
                    reply = Scripted(500, {"error": "no reply"})
                if reply.delay_s:
                    time.sleep(reply.delay_s)  # the server side of a timeout test
                payload = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.send_header("content-length", str(len(payload.encode())))
                    self.end_headers()
                    self.wfile.write(payload.encode())
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def openai_body(text: str | None) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-5.2",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 812, "completion_tokens": 40, "total_tokens": 852}}


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
