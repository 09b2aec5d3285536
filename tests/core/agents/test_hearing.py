"""Agents that hear: the sound of the last step as audio (models that take it) or as a spectrogram picture (any
VLM), checked in the payload each official SDK really sends to a loopback server."""

from __future__ import annotations

import base64
import io

import cv2
import numpy as np
import pytest

from core.agents.hearing import NO_SOUND, NOTHING_HEARD, SPECTROGRAM_SENTENCE, spectrogram_picture
from core.agents.models.base import ModelError, audio_refusal, config_for
from core.agents.models.clients import make_client
from core.agents.observation import Observation
from core.agents.vlm_agent import VLMAgent
from core.audio.clip import AudioClip
from core.audio.wav import read_wav
from core.backends.profile import load_backend
from core.paths import PROJECT_ROOT
from tests.loopback import LoopbackProvider, Scripted, anthropic_body, gemini_body, openai_body

KEY = "sk-test-SECRET-0123456789"
REPLY = '{"thought": "I heard a thud", "self_assessment": "stuck", "action": "RotateLeft"}'
FRAME = np.full((360, 640, 3), 90, np.uint8)
RATE, WALK = read_wav(PROJECT_ROOT / "docs" / "sounds" / "walk.wav")  # the town's own sound, recorded
STEP_SOUND = AudioClip(RATE, WALK[RATE // 2: RATE // 2 + 12 * 800])  # one step: 12 ticks of 800 samples


def _wav_pcm(data: bytes) -> tuple[int, np.ndarray]:
    import wave

    with wave.open(io.BytesIO(data)) as wav:
        pcm = np.frombuffer(wav.readframes(wav.getnframes()), "<i2").reshape(-1, wav.getnchannels())
        return wav.getframerate(), pcm


@pytest.fixture
def server(monkeypatch):
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.setenv(name, KEY)
    provider = LoopbackProvider()
    yield provider
    provider.close()


def _agent(name: str, server: LoopbackProvider, suffix: str) -> VLMAgent:
    config = config_for(name, base_url=f"http://127.0.0.1:{server.port}{suffix}", timeout_s=5.0, max_attempts=1)
    actions = load_backend("builtin").action_set()
    return VLMAgent(make_client(config), actions, "goal_only")


def _observation(mode: str, sound: AudioClip | None, step: int = 2) -> Observation:
    return Observation(step=step, instruction="Walk to the fountain.", frame=FRAME, audio=sound, audio_mode=mode)


def test_openai_audio_models_get_the_steps_sound_as_an_input_audio_part(server):
    server.replies.append(Scripted(200, openai_body(REPLY)))
    decision = _agent("openai:gpt-4o-audio-preview", server, "/v1").decide(_observation("clip", STEP_SOUND))
    assert decision.action is not None
    content = server.requests[0]["body"]["messages"][1]["content"]
    parts = [part for part in content if part["type"] == "input_audio"]
    assert len(parts) == 1 and parts[0]["input_audio"]["format"] == "wav"
    rate, pcm = _wav_pcm(base64.b64decode(parts[0]["input_audio"]["data"]))
    assert rate == RATE and np.array_equal(pcm, STEP_SOUND.samples)  # exactly the step's PCM, both ears
    assert "what you heard during your last action" in content[0]["text"]


def test_gemini_gets_the_steps_sound_as_an_inline_audio_part(server):
    server.replies.append(Scripted(200, gemini_body(REPLY)))
    _agent("gemini-3-pro", server, "").decide(_observation("clip", STEP_SOUND))
    parts = server.requests[0]["body"]["contents"][0]["parts"]
    audio = [part["inlineData"] for part in parts if part.get("inlineData", {}).get("mime_type") == "audio/wav"]
    assert len(audio) == 1
    data = audio[0]["data"]
    rate, pcm = _wav_pcm(base64.urlsafe_b64decode(data + "=" * (-len(data) % 4)))  # the SDK's URL-safe base64
    assert rate == RATE and np.array_equal(pcm, STEP_SOUND.samples)


def test_any_vlm_gets_the_spectrogram_as_one_more_image_and_a_sentence_saying_what_it_is(server):
    server.replies.append(Scripted(200, anthropic_body(REPLY)))
    _agent("claude-sonnet-4.6", server, "").decide(_observation("spectrogram", STEP_SOUND))
    content = server.requests[0]["body"]["messages"][0]["content"]
    images = [part["source"]["data"] for part in content if part["type"] == "image"]
    assert len(images) == 2  # the frame, then the sound
    sent = cv2.imdecode(np.frombuffer(base64.b64decode(images[1]), np.uint8), cv2.IMREAD_COLOR)[..., ::-1]
    assert np.array_equal(sent, spectrogram_picture(STEP_SOUND, 640, 360))  # PNG: exactly the picture, frame-sized
    text = content[-1]["text"]
    assert SPECTROGRAM_SENTENCE in text and "image 2 is the sound of your last action" in text
    assert "input_audio" not in str(server.requests[0]["body"])


def test_the_first_step_says_nothing_was_heard_yet_and_sends_no_audio(server):
    server.replies.append(Scripted(200, openai_body(REPLY)))
    _agent("openai:gpt-4o-audio-preview", server, "/v1").decide(_observation("clip", None, step=1))
    body = server.requests[0]["body"]
    assert NOTHING_HEARD in body["messages"][1]["content"][0]["text"]
    assert "input_audio" not in str(body)


def test_a_game_without_sound_is_said_to_be_silent_not_given_silence(server):
    server.replies.append(Scripted(200, openai_body(REPLY)))
    _agent("openai:gpt-4o-audio-preview", server, "/v1").decide(_observation("clip", None, step=7))
    body = server.requests[0]["body"]
    assert NO_SOUND in body["messages"][1]["content"][0]["text"] and "input_audio" not in str(body)


def test_models_that_cannot_take_audio_are_refused_with_the_alternative_named():
    for name in ("claude-sonnet-4.6", "gpt-5.2", "openai:gpt-4o"):
        why = audio_refusal(config_for(name))
        assert why is not None and "--audio spectrogram" in why, name
    assert audio_refusal(config_for("gemini-3-pro")) is None
    assert audio_refusal(config_for("openai:gpt-4o-audio-preview")) is None
    assert audio_refusal(config_for("openai:my-local-model", audio_input=True)) is None  # a server that says so


def test_a_client_given_audio_it_cannot_send_refuses_before_any_request(server):
    config = config_for("claude-sonnet-4.6", base_url=f"http://127.0.0.1:{server.port}", max_attempts=1)
    with pytest.raises(ModelError, match="--audio spectrogram"):
        make_client(config).complete("sys", "text", [], audio=b"RIFF")
    assert not server.requests


def test_the_picture_is_dark_for_silence_bright_for_steps_and_louder_on_the_louder_ear():
    silence = spectrogram_picture(AudioClip(RATE, np.zeros_like(STEP_SOUND.samples)))
    steps = spectrogram_picture(STEP_SOUND)
    half = steps.shape[0] // 2
    assert silence[:half - 20, 40:-10].mean() < 10 < steps[:half - 20, 40:-10].mean()
    left_only = STEP_SOUND.samples.copy()
    left_only[:, 1] //= 16  # the right ear 24 dB quieter: the sound is on the left
    picture = spectrogram_picture(AudioClip(RATE, left_only))
    upper, lower = picture[8:half - 20, 40:-10].mean(), picture[half + 8:-40, 40:-10].mean()
    assert upper > lower + 15, (upper, lower)
