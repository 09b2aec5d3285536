"""`python main.py bench parse`: how fast the reply parser is, and how many corpus replies it gets right.

Each corpus reply is parsed `--rounds` times, interleaved with the baseline (`json.loads` of a canonical
one-line reply) so both see the same machine load; a reply's time is its median over the rounds, and the
p50 and p99 are taken over the replies. A 200 kB reasoning reply and inputs built to make a careless
parser quadratic are timed as well. The corpus pass rate
is the share of replies whose parse matches the expectation written beside it (docs/replies.md); the
wrong-action count is how many were accepted as an action the expectation does not allow.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

CANONICAL = '{"thought": "The bakery is ahead.", "self_assessment": "progressing", "action": "MoveForward"}'
_PROSE = ("I compare the two frames: the \"Inn\" sign {left edge} hasn't moved, so I'm not where I'd hoped. "
          "Options are {MoveLeft, RotateLeft}; the fence's gap is 'maybe' 1 m wide. ")
# Inputs built to make a careless parser quadratic: stray braces, unclosed comments, deep nesting.
_ADVERSARIAL = {
    "stray_braces": "{" * 50_000,
    "unclosed_comments": "{/*" * 20_000,
    "deep_nesting": '{"a":[' * 10_000,
    "keys_without_values": '{"a" ' * 12_000,
    "unterminated_objects": '{"a": {"b": 1}, ' * 4_000,
}


def _percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def _timed(call: Callable[[], Any]) -> float:
    started = time.perf_counter_ns()
    call()
    return (time.perf_counter_ns() - started) / 1000.0  # µs


def bench_parse(args: argparse.Namespace, emit: Callable[..., None]) -> None:
    from core.agents.parser import parse_reply
    from core.agents.reply_corpus import DEFAULT_CORPUS, CorpusError, check, load_corpus, wrong_action
    from core.backends.profile import load_backend

    actions = load_backend("builtin").action_set()
    try:
        corpus = load_corpus(Path(args.corpus) if args.corpus else DEFAULT_CORPUS)
    except CorpusError as exc:
        raise SystemExit(f"bench parse: {exc}") from None

    failures: list[str] = []
    wrong = 0
    by_style: dict[str, list[bool]] = defaultdict(list)
    for entry in corpus:
        result = parse_reply(entry.reply, actions, entry.paradigm)
        problem = check(entry, result)
        wrong += wrong_action(entry, result)
        by_style[entry.style or "unstyled"].append(problem is None)
        if problem:
            failures.append(f"{entry.id}: {problem}")
    for line in failures:
        print(f"corpus mismatch: {line}", file=sys.stderr)

    # Each reply's time is its median over the rounds, so that a scheduler hiccup on a shared machine is
    # not reported as the parser's p99; the percentiles are then taken over the corpus's replies.
    parse_times: list[list[float]] = [[] for _ in corpus]
    canonical_times: list[float] = []
    json_times: list[float] = []
    for _ in range(args.rounds):
        for index, entry in enumerate(corpus):
            parse_times[index].append(_timed(lambda e=entry: parse_reply(e.reply, actions, e.paradigm)))
            canonical_times.append(_timed(lambda: parse_reply(CANONICAL, actions)))
            json_times.append(_timed(lambda: json.loads(CANONICAL)))
    per_reply = [_percentile(times, 0.5) for times in parse_times]
    json_median = _percentile(json_times, 0.5)
    emit(args, "corpus_parse_p50_us", _percentile(per_reply, 0.5), "µs", json_median, "json_loads_canonical_us")
    emit(args, "corpus_parse_p99_us", _percentile(per_reply, 0.99), "µs", json_median, "json_loads_canonical_us")
    emit(args, "canonical_parse_us", _percentile(canonical_times, 0.5), "µs", json_median, "json_loads_canonical_us")

    long_reply = _PROSE * 1200 + "\n\n" + CANONICAL  # about 200 kB of reasoning, the answer last
    long_ms = min(_timed(lambda: parse_reply(long_reply, actions)) for _ in range(5)) / 1000
    scan_ms = min(_timed(lambda: re.findall(r'[{}"]', long_reply)) for _ in range(5)) / 1000
    emit(args, "long_reply_parse_ms", long_ms, "ms", scan_ms, "regex_scan_for_braces_and_quotes_ms")
    worst = max(min(_timed(lambda t=text: parse_reply(t, actions)) for _ in range(3)) / (len(text) / 1024)
                for text in _ADVERSARIAL.values())
    emit(args, "adversarial_worst_us_per_kib", worst, "µs/KiB", long_ms * 1000 / (len(long_reply) / 1024),
         "long_reply_us_per_kib")

    emit(args, "corpus_size", len(corpus), "replies")
    emit(args, "corpus_pass_rate", (len(corpus) - len(failures)) / len(corpus), "fraction")
    emit(args, "corpus_wrong_actions", wrong, "replies")  # accepted, but not the expected action
    for style, results in sorted(by_style.items()):
        emit(args, f"corpus_pass_rate_{re.sub(r'[^a-z0-9]+', '_', style.lower())}", sum(results) / len(results),
             "fraction")
