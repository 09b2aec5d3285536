"""A loopback HTTP server that answers like a model provider: scripted replies, recorded requests.

The tests talk to it through the official SDKs (tests/loopback.py adds the other providers' reply bodies), and
`python main.py bench run --model-latency S` runs whole batches against it (core/cli/bench_model_server.py).
With `keep_alive` it speaks HTTP/1.1, so an SDK client keeps one connection for all its requests and the
server's `timeline` (connection, arrived, answered, status) follows each client's requests in order.
"""

from __future__ import annotations

import itertools
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
    headers: dict[str, str] = field(default_factory=dict[str, str])


@dataclass(frozen=True)
class Answered:
    """One request as the server saw it: on which connection, when it arrived and when its answer left
    (time.monotonic, the same clock in every process of the machine), and the status sent."""

    connection: int
    arrived: float
    answered: float
    status: int


class LoopbackProvider:
    """Answers with the scripted replies in order; once they run out, with `responder(request)` if set.

    `keep_requests=False` keeps no request bodies (a long bench sends thousands of images)."""

    def __init__(self, responder: Callable[[dict[str, Any]], Scripted] | None = None, *, keep_alive: bool = False,
                 keep_requests: bool = True) -> None:
        self.replies: deque[Scripted] = deque()
        self.requests: list[dict[str, Any]] = []
        self.responder = responder
        self.timeline: list[Answered] = []
        self._timeline_lock = threading.Lock()
        connections = itertools.count(1)
        provider = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"
            # An answer is written as headers, then body: with Nagle's algorithm on, the body waits for the
            # client's delayed ACK of the headers (40 ms on Linux), which no real provider's server adds.
            disable_nagle_algorithm = True

            def setup(self) -> None:
                super().setup()
                self.connection_id = next(connections)

            def do_POST(self) -> None:
                arrived = time.monotonic()
                length = int(self.headers.get("content-length", 0))
                body = self.rfile.read(length)
                request = {"path": self.path, "headers": dict(self.headers),
                           "body": json.loads(body) if body and keep_requests else None}
                if keep_requests:
                    provider.requests.append(request)
                if provider.replies:
                    reply = provider.replies.popleft()
                elif provider.responder is not None:
                    reply = provider.responder(request)
                else:
                    reply = Scripted(500, {"error": "no reply"})
                if reply.delay_s:
                    time.sleep(reply.delay_s)  # the server side of a timeout test; a model thinking
                payload = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.send_header("content-length", str(len(payload.encode())))
                    self.end_headers()
                    self.wfile.write(payload.encode())
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    return  # the client gave up (timeout test)
                with provider._timeline_lock:
                    provider.timeline.append(Answered(self.connection_id, arrived, time.monotonic(), reply.status))

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def take_timeline(self) -> list[Answered]:
        """The requests answered since the last call, and forget them."""
        with self._timeline_lock:
            taken, self.timeline = self.timeline, []
        return taken

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def openai_body(text: str | None) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-5.2",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 812, "completion_tokens": 40, "total_tokens": 852}}
