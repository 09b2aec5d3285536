"""Each model client, on its official SDK, against a loopback server speaking that provider's shapes."""

from __future__ import annotations

import numpy as np
import pytest

from core.agents.models.base import ModelError, config_for
from core.agents.models.clients import make_client
from tests.loopback import LoopbackProvider, Scripted, anthropic_body, gemini_body, openai_body

KEY = "sk-test-SECRET-0123456789"
REPLY = '{"thought": "the bakery is ahead", "self_assessment": "progressing", "action": "MoveForward"}'
PROVIDERS = {
    "gpt-5.2": (openai_body, "OPENAI_API_KEY", "/v1"),
    "claude-sonnet-4.6": (anthropic_body, "ANTHROPIC_API_KEY", ""),
    "gemini-3-pro": (gemini_body, "GEMINI_API_KEY", ""),
}
IMAGE = np.zeros((36, 64, 3), np.uint8)


@pytest.fixture(params=list(PROVIDERS))
def provider(request, monkeypatch):
    body, key_env, suffix = PROVIDERS[request.param]
    monkeypatch.setenv(key_env, KEY)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    server = LoopbackProvider()
    config = config_for(request.param, base_url=f"http://127.0.0.1:{server.port}{suffix}", timeout_s=1.0,
                        max_attempts=3, backoff_s=0.01)
    yield request.param, body, server, config
    server.close()


def test_a_successful_call_returns_text_usage_and_cost(provider):
    _, body, server, config = provider
    server.replies.append(Scripted(200, body(REPLY)))
    reply = make_client(config).complete("You control a character.", "Step 1.", [("current view", IMAGE)])
    assert reply.text == REPLY and (reply.input_tokens, reply.output_tokens) == (812, 40)
    assert reply.attempts == 1 and reply.cost_usd > 0
    request = server.requests[0]
    sent = str(request["body"])
    assert "Step 1." in sent and "iVBORw0KGgo" in sent  # the text and a PNG image went out
    assert KEY in str(request["headers"])  # the key travels only in the request headers


def test_a_429_is_retried_then_succeeds(provider):
    _, body, server, config = provider
    server.replies.extend([Scripted(429, {"error": {"message": "rate limited", "type": "rate_limit_error"}}),
                           Scripted(200, body(REPLY))])
    reply = make_client(config).complete("sys", "text", [])
    assert reply.text == REPLY and reply.attempts == 2 and len(server.requests) == 2


def test_a_5xx_storm_fails_for_good_without_leaking_the_key(provider):
    _, _, server, config = provider
    server.replies.extend([Scripted(503, {"error": {"message": f"overloaded {KEY}"}})] * 3)
    with pytest.raises(ModelError, match="failed after 3 attempts") as caught:
        make_client(config).complete("sys", "text", [])
    assert KEY not in str(caught.value)
    assert KEY not in str(config.describe())


def test_a_reply_without_text_is_a_clear_error(provider):
    _, body, server, config = provider
    server.replies.append(Scripted(200, body(None)))
    with pytest.raises(ModelError, match="had no text"):
        make_client(config).complete("sys", "text", [])


def test_a_timeout_is_retried_and_then_reported(provider):
    _, body, server, config = provider
    server.replies.extend([Scripted(200, body(REPLY), delay_s=1.5)] * 3)
    with pytest.raises(ModelError, match="failed after 3 attempts"):
        make_client(config).complete("sys", "text", [])


def test_a_missing_key_names_the_variable(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ModelError, match="set ANTHROPIC_API_KEY in the environment"):
        make_client(config_for("claude-sonnet-4.6"))
    with pytest.raises(ModelError, match="unknown model 'gpt-9'"):
        config_for("gpt-9")
