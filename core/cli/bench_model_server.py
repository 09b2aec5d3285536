"""The stand-in model of `bench run --model-latency S`: a loopback OpenAI-compatible server in a process of its
own (so its threads and JSON never share the measured harness's interpreter), answering valid actions after
the latency, with optional jitter and 429s.

    python -m core.cli.bench_model_server --latency 3 [--jitter 0.5] [--rate-429 0.05] [--seed 0]

It prints `{"port": N}`, then answers one line on stdin with another: `take` gives the requests answered since
the last `take` (connection, arrived, answered, status; time.monotonic); end of stdin ends it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import sys
import threading
from typing import Any

from core.agents.models.loopback import LoopbackProvider, Scripted, openai_body

ACTIONS = ("MoveForward", "MoveForward", "RotateLeft", "MoveForward", "RotateRight")
RETRY_AFTER_S = "1"


class ModelStandIn:
    """A responder: a valid action after `latency_s` (± `jitter_s`, uniform), or a 429 with probability
    `rate_429` (answered at once, as providers do)."""

    def __init__(self, latency_s: float, jitter_s: float = 0.0, rate_429: float = 0.0, seed: int = 0) -> None:
        self.latency_s, self.jitter_s, self.rate_429 = latency_s, jitter_s, rate_429
        self._random = random.Random(seed)
        self._lock = threading.Lock()
        self._count = 0

    def __call__(self, request: dict[str, Any]) -> Scripted:
        with self._lock:
            self._count += 1
            action = ACTIONS[self._count % len(ACTIONS)]
            limited = self._random.random() < self.rate_429
            delay = max(0.0, self.latency_s + self._random.uniform(-self.jitter_s, self.jitter_s))
        if limited:
            return Scripted(429, {"error": {"message": "rate limited (bench)", "type": "rate_limit_error"}},
                            headers={"retry-after": RETRY_AFTER_S})
        reply = json.dumps({"thought": "bench", "self_assessment": "progressing", "action": action})
        return Scripted(200, openai_body(reply), delay_s=delay)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--latency", type=float, required=True)
    parser.add_argument("--jitter", type=float, default=0.0)
    parser.add_argument("--rate-429", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    server = LoopbackProvider(ModelStandIn(args.latency, args.jitter, args.rate_429, args.seed), keep_alive=True,
                              keep_requests=False)
    print(json.dumps({"port": server.port}), flush=True)
    try:
        for line in sys.stdin:
            if line.strip() == "take":
                print(json.dumps([dataclasses.astuple(entry) for entry in server.take_timeline()]), flush=True)
    finally:
        server.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
