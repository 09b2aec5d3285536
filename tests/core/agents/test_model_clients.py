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
ALL_KEY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")


@pytest.fixture(params=list(PROVIDERS))
def provider(request, monkeypatch):
    body, key_env, suffix = PROVIDERS[request.param]
    for name in ALL_KEY_VARIABLES:  # only this provider's key, so a test cannot pass on a stray variable
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(key_env, KEY)
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


def _client_with_keys(monkeypatch, preset: str, keys: dict[str, str], server: LoopbackProvider):
    for name in ALL_KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for name, value in keys.items():
        monkeypatch.setenv(name, value)
    suffix = PROVIDERS[preset][2]
    return make_client(config_for(preset, base_url=f"http://127.0.0.1:{server.port}{suffix}", timeout_s=1.0,
                                  max_attempts=2, backoff_s=0.01))


GOOGLE_ONLY = ("gemini-3-pro", {"GOOGLE_API_KEY": "AIza-google-ONLY-key-98765"})
BOTH_GOOGLE = ("gemini-3-pro", {"GEMINI_API_KEY": "AIza-gemini-key-11111", "GOOGLE_API_KEY": "AIza-google-key-22222"})
EVERY_KEY_SETUP = [(preset, {key_env: KEY}) for preset, (_, key_env, _) in PROVIDERS.items()]
EVERY_KEY_SETUP += [GOOGLE_ONLY, BOTH_GOOGLE]


@pytest.mark.parametrize(("preset", "keys"), EVERY_KEY_SETUP, ids=lambda v: v if isinstance(v, str) else "+".join(v))
@pytest.mark.parametrize("status", [400, 503])
def test_an_error_that_echoes_every_configured_key_is_redacted(monkeypatch, preset, keys, status):
    """A provider (or a proxy in front of it) that echoes the key back: neither the final error nor its
    chain holds any configured key, whichever variable supplied it (GOOGLE_API_KEY alone included)."""
    server = LoopbackProvider()
    try:
        client = _client_with_keys(monkeypatch, preset, keys, server)
        echo = " ".join(keys.values())
        server.replies.extend([Scripted(status, {"error": {"message": f"API key not valid: {echo}",
                                                           "status": "INVALID_ARGUMENT"}})] * 2)
        with pytest.raises(ModelError) as caught:
            client.complete("sys", "text", [])
    finally:
        server.close()
    shown = f"{caught.value} {caught.value!r} {caught.value.__cause__!r}"
    assert "[redacted]" in shown or status == 503  # 503s are reported by status, without the body
    for value in keys.values():
        assert value not in shown
    assert client.config.api_key() in str(server.requests[0]["headers"])  # the key went out, in the headers


GARBAGE = {  # 200 replies that no client anticipates: each SDK or client fails with its own exception type
    "gpt-5.2": Scripted(200, f"<html>proxy login for {KEY}</html>"),
    "claude-sonnet-4.6": Scripted(200, f"<html>proxy login for {KEY}</html>"),
    "gemini-3-pro": Scripted(200, {"candidates": [7], "note": KEY}),
}


@pytest.mark.parametrize("preset", list(PROVIDERS))
def test_an_unanticipated_failure_is_a_redacted_model_error(monkeypatch, preset):
    """Not a raw JSONDecodeError or TypeError that escapes with whatever it holds: a ModelError naming
    the provider and model, with keys redacted and no exception chain to print."""
    server = LoopbackProvider()
    try:
        client = _client_with_keys(monkeypatch, preset, {PROVIDERS[preset][1]: KEY}, server)
        server.replies.append(GARBAGE[preset])
        with pytest.raises(ModelError) as caught:
            client.complete("sys", "text", [])
    finally:
        server.close()
    assert client.config.model in str(caught.value) or "reply" in str(caught.value)
    assert KEY not in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


AUDIO_WAV = b"RIFF$\x00\x00\x00WAVEfmt " + bytes(28)  # the client sends it as is; the server only counts tokens


@pytest.mark.parametrize("name", ["openai:gpt-audio", "google:gemini-2.5-flash"])
def test_audio_input_tokens_are_counted_apart_and_priced_at_the_audio_price(monkeypatch, name):
    """Providers count a prompt's audio tokens apart (OpenAI: usage.prompt_tokens_details.audio_tokens; Gemini:
    usage_metadata.prompt_tokens_details by modality) and some bill them at their own price."""
    provider = name.partition(":")[0]
    monkeypatch.setenv("OPENAI_API_KEY" if provider == "openai" else "GEMINI_API_KEY", KEY)
    body = openai_body(REPLY) if provider == "openai" else gemini_body(REPLY)
    if provider == "openai":
        body["usage"]["prompt_tokens_details"] = {"audio_tokens": 300, "cached_tokens": 0}
    else:
        body["usageMetadata"]["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": 512},
                                                        {"modality": "AUDIO", "tokenCount": 300}]
    server = LoopbackProvider()
    server.replies.append(Scripted(200, body))
    suffix = "/v1" if provider == "openai" else ""
    config = config_for(name, base_url=f"http://127.0.0.1:{server.port}{suffix}", timeout_s=5.0, max_attempts=1,
                        usd_per_million_in=2.0, usd_per_million_out=10.0, usd_per_million_audio_in=40.0,
                        audio_input=True)
    try:
        reply = make_client(config).complete("You control a character.", "Step 1.", [("current view", IMAGE)],
                                             audio=AUDIO_WAV)
    finally:
        server.close()
    assert (reply.input_tokens, reply.audio_input_tokens, reply.output_tokens) == (812, 300, 40)
    assert reply.usage()["audio_input_tokens"] == 300
    assert reply.cost_usd == pytest.approx((512 * 2.0 + 300 * 40.0 + 40 * 10.0) / 1e6)


def test_without_an_audio_price_audio_input_costs_what_other_input_costs(provider):
    _, body, server, config = provider
    server.replies.append(Scripted(200, body(REPLY)))
    reply = make_client(config).complete("You control a character.", "Step 1.", [("current view", IMAGE)])
    assert reply.audio_input_tokens == 0 and "audio_input_tokens" not in reply.usage()
    assert reply.cost_usd == pytest.approx((812 * config.usd_per_million_in + 40 * config.usd_per_million_out) / 1e6)
