"""OpenAI (and any OpenAI-compatible server), Anthropic and Google Gemini clients on the official SDKs.

The SDKs' own retries are switched off so that every provider retries the same way (base.py).
"""

from __future__ import annotations

import base64
import importlib
from typing import Any

import numpy as np

from core.agents.models.base import (
    ModelClient,
    ModelConfig,
    ModelError,
    ModelReply,
    RetryableError,
    audio_refusal,
    with_retries,
)
from core.agents.models.rate_limit import RequestLimiter
from core.agents.observe import encode_image


def _need(package: str) -> Any:
    try:
        return importlib.import_module(package)
    except ImportError:
        raise ModelError(f"the {package} package is missing: pip install -e '.[vlm]'") from None


class OpenAIClient:
    def __init__(self, config: ModelConfig, limiter: RequestLimiter | None = None) -> None:
        self.config = config
        self.limiter = limiter
        self._sdk = _need("openai")
        self._client = self._sdk.OpenAI(api_key=config.api_key(), base_url=config.base_url,
                                        timeout=config.timeout_s, max_retries=0)

    def complete(self, system: str, text: str, images: list[tuple[str, np.ndarray]],
                 audio: bytes | None = None) -> ModelReply:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        content += [{"type": "image_url", "image_url": {"url": f"data:image/png;base64,{encode_image(image)}"}}
                    for _, image in images]
        if audio is not None:  # a WAV file, base64 without a data: prefix (Chat Completions' input_audio part)
            content.append({"type": "input_audio",
                            "input_audio": {"data": base64.b64encode(audio).decode("ascii"), "format": "wav"}})
        messages = [{"role": "system", "content": system}, {"role": "user", "content": content}]
        sdk = self._sdk

        def call() -> ModelReply:
            try:
                response = self._client.chat.completions.create(model=self.config.model, messages=messages,
                                                                max_completion_tokens=self.config.max_output_tokens)
            except (sdk.RateLimitError, sdk.InternalServerError, sdk.APITimeoutError, sdk.APIConnectionError) as exc:
                raise RetryableError(f"{type(exc).__name__}: {exc}", isinstance(exc, sdk.RateLimitError)) from None
            except sdk.APIStatusError as exc:
                raise ModelError(f"OpenAI API error {exc.status_code}: {exc.message}") from None
            except sdk.APIError as exc:
                raise ModelError(f"OpenAI API error: {exc}") from None
            choices: list[Any] = getattr(response, "choices", None) or []
            message = choices[0].message.content if choices else None
            if not isinstance(message, str):
                raise ModelError("the OpenAI reply had no text content")
            usage = getattr(response, "usage", None)
            details = getattr(usage, "prompt_tokens_details", None)  # the audio part of the prompt, counted apart
            return ModelReply(message, getattr(usage, "prompt_tokens", 0) or 0,
                              getattr(usage, "completion_tokens", 0) or 0,
                              audio_input_tokens=getattr(details, "audio_tokens", 0) or 0)

        return with_retries(self.config, call, limiter=self.limiter)


class AnthropicClient:
    def __init__(self, config: ModelConfig, limiter: RequestLimiter | None = None) -> None:
        self.config = config
        self.limiter = limiter
        self._sdk = _need("anthropic")
        self._client = self._sdk.Anthropic(api_key=config.api_key(), base_url=config.base_url,
                                           timeout=config.timeout_s, max_retries=0)

    def complete(self, system: str, text: str, images: list[tuple[str, np.ndarray]],
                 audio: bytes | None = None) -> ModelReply:
        if audio is not None:
            raise ModelError(audio_refusal(self.config) or "the Anthropic API takes no audio input")
        content: list[dict[str, Any]] = [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": encode_image(image)}}
            for _, image in images
        ]
        content.append({"type": "text", "text": text})
        sdk = self._sdk

        def call() -> ModelReply:
            try:
                response = self._client.messages.create(model=self.config.model, system=system,
                                                        max_tokens=self.config.max_output_tokens,
                                                        messages=[{"role": "user", "content": content}])
            except (sdk.RateLimitError, sdk.InternalServerError, sdk.APITimeoutError, sdk.APIConnectionError) as exc:
                raise RetryableError(f"{type(exc).__name__}: {exc}", isinstance(exc, sdk.RateLimitError)) from None
            except sdk.APIStatusError as exc:
                if exc.status_code >= 500:
                    raise RetryableError(f"HTTP {exc.status_code}") from None
                raise ModelError(f"Anthropic API error {exc.status_code}: {exc.message}") from None
            except sdk.APIError as exc:
                raise ModelError(f"Anthropic API error: {exc}") from None
            blocks: list[Any] = getattr(response, "content", None) or []
            texts: list[str] = [block.text for block in blocks if block.type == "text"]
            if not texts:
                raise ModelError("the Anthropic reply had no text block")
            usage = getattr(response, "usage", None)
            return ModelReply("".join(texts), getattr(usage, "input_tokens", 0) or 0,
                              getattr(usage, "output_tokens", 0) or 0)

        return with_retries(self.config, call, limiter=self.limiter)


class GeminiClient:
    def __init__(self, config: ModelConfig, limiter: RequestLimiter | None = None) -> None:
        self.config = config
        self.limiter = limiter
        genai = _need("google.genai")
        self._types = _need("google.genai.types")
        self._errors = _need("google.genai.errors")
        options = self._types.HttpOptions(base_url=config.base_url, timeout=int(config.timeout_s * 1000))
        self._client = genai.Client(api_key=config.api_key(), http_options=options)

    def complete(self, system: str, text: str, images: list[tuple[str, np.ndarray]],
                 audio: bytes | None = None) -> ModelReply:
        types = self._types
        parts = [types.Part.from_bytes(data=base64.b64decode(encode_image(image)), mime_type="image/png")
                 for _, image in images]
        if audio is not None:  # an inline audio part (a WAV file)
            parts.append(types.Part.from_bytes(data=audio, mime_type="audio/wav"))
        parts.append(types.Part.from_text(text=text))
        config = types.GenerateContentConfig(system_instruction=system,
                                             max_output_tokens=self.config.max_output_tokens)

        def call() -> ModelReply:
            try:
                response = self._client.models.generate_content(model=self.config.model, contents=parts,
                                                                config=config)
            except self._errors.APIError as exc:
                code = getattr(exc, "code", 0) or 0
                if code == 429 or code >= 500:
                    raise RetryableError(f"HTTP {code}", rate_limited=code == 429) from None
                raise ModelError(f"Gemini API error {code}: {getattr(exc, 'message', exc)}") from None
            except ValueError as exc:
                raise ModelError(f"the Gemini reply could not be read: {exc}") from None
            except Exception as exc:
                if _is_transport_failure(exc):
                    raise RetryableError(type(exc).__name__) from None
                raise
            try:
                reply_text = response.text
            except (ValueError, AttributeError):
                reply_text = None
            if not isinstance(reply_text, str):
                raise ModelError("the Gemini reply had no text")
            usage = getattr(response, "usage_metadata", None)
            return ModelReply(reply_text, getattr(usage, "prompt_token_count", 0) or 0,
                              getattr(usage, "candidates_token_count", 0) or 0,
                              audio_input_tokens=_gemini_audio_tokens(usage))

        return with_retries(self.config, call, limiter=self.limiter)


def _is_transport_failure(exc: BaseException) -> bool:
    """Timeouts and dropped connections, recognised by class name across HTTP libraries."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    return bool(names & {"TimeoutException", "TransportError", "ConnectError", "ReadTimeout", "TimeoutError",
                         "ConnectionError", "RemoteProtocolError"})


def make_client(config: ModelConfig, limiter: RequestLimiter | None = None) -> ModelClient:
    """A client for `config`; with a `limiter`, every request waits for its permit (a run's shared limit)."""
    factories = {"openai": OpenAIClient, "anthropic": AnthropicClient, "google": GeminiClient}
    return factories[config.provider](config, limiter)


def _gemini_audio_tokens(usage: Any) -> int:
    """The prompt's tokens of the AUDIO modality, from usage_metadata.prompt_tokens_details."""
    total = 0
    parts: list[Any] = list(getattr(usage, "prompt_tokens_details", None) or [])
    for part in parts:
        modality = getattr(part, "modality", None)
        name = str(getattr(modality, "value", modality) or "")
        if name.upper().endswith("AUDIO"):
            total += getattr(part, "token_count", 0) or 0
    return total
