"""The model-client interface, presets for the paper's models, keys from the environment, retries.

Keys are read from environment variables only. They are never stored in a client's description,
in recordings, in logs or in exception messages: every error text passes through `redact`.
"""

from __future__ import annotations

import contextlib
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from core.agents.models.rate_limit import RequestLimiter, limiter_key

# A permit outlives its request by this much at most; the request itself is bounded by the client's timeout.
PERMIT_LEASE_MARGIN_S = 30.0


class ModelError(RuntimeError):
    """The model call failed for good (after retries); the message never contains a key."""


class RetryableError(RuntimeError):
    """A failure worth retrying: HTTP 429 or 5xx, a timeout or a dropped connection. `rate_limited`: the
    provider said too many requests (429), so a shared limiter holds everyone back, not just this caller."""

    def __init__(self, message: str, rate_limited: bool = False) -> None:
        super().__init__(message)
        self.rate_limited = rate_limited


@dataclass(frozen=True)
class Preset:
    provider: str
    model: str
    key_env: tuple[str, ...]
    usd_per_million_in: float
    usd_per_million_out: float
    usd_per_million_audio_in: float | None = None  # audio input billed apart; None: as other input


# Model ids are what the providers called these models when the paper was written; override
# them with --model-id. Prices are list prices per million tokens, for cost estimates only. Audio input
# (`--audio clip`) is billed at the input price for Gemini 3 Pro; providers that price it apart (OpenAI's audio
# models, Gemini's Flash models) report its tokens apart, and `usd_per_million_audio_in` prices them.
PRESETS: dict[str, Preset] = {
    "claude-sonnet-4.6": Preset("anthropic", "claude-sonnet-4-6", ("ANTHROPIC_API_KEY",), 3.0, 15.0),
    "gpt-5.2": Preset("openai", "gpt-5.2", ("OPENAI_API_KEY",), 1.75, 14.0),
    "gemini-3-pro": Preset("google", "gemini-3-pro-preview", ("GEMINI_API_KEY", "GOOGLE_API_KEY"), 2.0, 12.0),
}


@dataclass(frozen=True)
class ModelConfig:
    provider: str
    model: str
    key_env: tuple[str, ...]
    base_url: str | None = None
    timeout_s: float = 60.0
    max_attempts: int = 5
    backoff_s: float = 1.0
    max_output_tokens: int = 1024
    usd_per_million_in: float = 0.0
    usd_per_million_out: float = 0.0
    usd_per_million_audio_in: float | None = None  # None: audio input costs what other input costs
    audio_input: bool | None = None  # whether the model takes audio; None: judged by provider and model id

    def describe(self) -> dict[str, Any]:
        """What goes into episode files: everything but the key."""
        return {"provider": self.provider, "model": self.model, "base_url": self.base_url,
                "timeout_s": self.timeout_s, "max_attempts": self.max_attempts, "key_env": list(self.key_env)}

    def api_key(self) -> str:
        for name in self.key_env:
            value = os.environ.get(name)
            if value:
                return value
        raise ModelError(f"no API key: set {' or '.join(self.key_env)} in the environment "
                         f"to use {self.provider} model {self.model}")


def config_for(name: str, model_id: str | None = None, base_url: str | None = None, **overrides: Any) -> ModelConfig:
    preset = PRESETS.get(name)
    if preset is None:
        provider, _, model = name.partition(":")
        if provider not in ("openai", "anthropic", "google") or not model:
            raise ModelError(f"unknown model {name!r}: use a preset ({', '.join(PRESETS)}) or provider:model-id "
                             "(openai:..., anthropic:..., google:...)")
        key_env = {"openai": ("OPENAI_API_KEY",), "anthropic": ("ANTHROPIC_API_KEY",),
                   "google": ("GEMINI_API_KEY", "GOOGLE_API_KEY")}[provider]
        return ModelConfig(provider, model_id or model, key_env, base_url, **overrides)
    return ModelConfig(preset.provider, model_id or preset.model, preset.key_env, base_url,
                       usd_per_million_in=preset.usd_per_million_in, usd_per_million_out=preset.usd_per_million_out,
                       usd_per_million_audio_in=preset.usd_per_million_audio_in, **overrides)


@dataclass(frozen=True)
class ModelReply:
    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    attempts: int = 1
    cost_usd: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict[str, Any])
    audio_input_tokens: int = 0  # of input_tokens, those the step's sound took (as the provider counted them)

    def usage(self) -> dict[str, Any]:
        counted = {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens, "attempts": self.attempts,
                   "cost_usd": round(self.cost_usd, 6), "latency_s": round(self.latency_s, 4)}
        if self.audio_input_tokens:
            counted["audio_input_tokens"] = self.audio_input_tokens
        return counted


def cost_usd(config: ModelConfig, reply: ModelReply) -> float:
    """What a reply cost at the config's list prices, audio input at its own price where it has one."""
    audio = min(reply.audio_input_tokens, reply.input_tokens)
    audio_price = config.usd_per_million_in if config.usd_per_million_audio_in is None \
        else config.usd_per_million_audio_in
    return ((reply.input_tokens - audio) * config.usd_per_million_in + audio * audio_price
            + reply.output_tokens * config.usd_per_million_out) / 1e6


class ModelClient(Protocol):
    config: ModelConfig

    def complete(self, system: str, text: str, images: list[tuple[str, np.ndarray]],
                 audio: bytes | None = None) -> ModelReply: ...


def audio_refusal(config: ModelConfig) -> str | None:
    """Why this model cannot be given the step's sound as audio (`--audio clip`), or None if it can.

    Gemini models take audio parts; on OpenAI's Chat Completions only the audio models do (gpt-4o-audio-preview,
    gpt-audio, ...); Anthropic's API takes no audio. An OpenAI-compatible server that does can say so with
    `audio_input=True` (`--model-audio-input`)."""
    if config.audio_input is not None:
        accepted = config.audio_input
    elif config.provider == "google":
        accepted = True
    elif config.provider == "openai":
        accepted = "audio" in config.model.lower()
    else:
        accepted = False
    if accepted:
        return None
    return (f"{config.provider} model {config.model} does not take audio input, so `--audio clip` cannot give it "
            "the sound; use `--audio spectrogram` (the sound drawn as one more image, for any vision model), or an "
            "audio model (openai:gpt-4o-audio-preview, any Gemini model)")


# Values this short are placeholders ("EMPTY", "none" for a local vLLM server), not secrets; replacing
# them would garble every message that happens to contain those letters.
MIN_SECRET_CHARS = 6


def key_variables(config: ModelConfig) -> tuple[str, ...]:
    """Every key variable the tool reads: this model's first, then every other provider's."""
    every = (*config.key_env, *(name for preset in PRESETS.values() for name in preset.key_env))
    return tuple(dict.fromkeys(every))


def configured_secrets(config: ModelConfig) -> list[str]:
    """The values of every key variable that is set, longest first (so no key is left half-redacted)."""
    values: set[str] = set()
    for name in key_variables(config):
        value = os.environ.get(name, "")
        values.update(v for v in (value, value.strip()) if len(v) >= MIN_SECRET_CHARS)
    return sorted(values, key=len, reverse=True)


def redact(message: str, secrets: list[str]) -> str:
    for secret in secrets:
        if secret:
            message = message.replace(secret, "[redacted]")
    return message


def with_retries(config: ModelConfig, call: Callable[[], ModelReply], sleep: Callable[[float], None] = time.sleep,
                 jitter: Callable[[], float] = random.random, limiter: RequestLimiter | None = None) -> ModelReply:
    """Run `call`, retrying RetryableError with exponential backoff (1 s, 2 s, 4 s... plus jitter).

    With a `limiter`, every attempt first takes a permit (a run's shared limit on requests in flight and
    per minute) and gives it back when the attempt ends, before any back-off sleep; a 429 also holds
    every other holder of the limiter back for the back-off time.

    Whatever fails leaves as a ModelError whose text has every configured key redacted, including
    failures none of the clients anticipated (an SDK's parsing error, a transport library's own
    exception): nothing raised here can carry a key into a result, a recording or a log.
    """
    secrets = configured_secrets(config)
    key = limiter_key(config.provider, config.base_url)
    started = time.perf_counter()
    for attempt in range(1, config.max_attempts + 1):
        try:
            lease_s = config.timeout_s + PERMIT_LEASE_MARGIN_S
            with limiter.permit(key, lease_s) if limiter is not None else contextlib.nullcontext():
                reply = call()
        except RetryableError as exc:
            if attempt == config.max_attempts:
                raise ModelError(redact(f"{config.provider} {config.model} failed after {attempt} attempts: {exc}",
                                        secrets)) from None
            delay = config.backoff_s * 2 ** (attempt - 1) * (1.0 + 0.25 * jitter())
            if limiter is not None and exc.rate_limited:
                limiter.back_off(key, delay)
            sleep(delay)
            continue
        except ModelError as exc:
            raise ModelError(redact(str(exc), secrets)) from None
        except Exception as exc:  # noqa: BLE001 - an unanticipated failure: keep its text, never its key
            raise ModelError(redact(f"{config.provider} {config.model} failed: {type(exc).__name__}: {exc}",
                                    secrets)) from None
        return ModelReply(reply.text, reply.input_tokens, reply.output_tokens, time.perf_counter() - started,
                          attempt, cost_usd(config, reply), reply.extra, reply.audio_input_tokens)
    raise AssertionError("unreachable")
