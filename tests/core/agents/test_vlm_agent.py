"""A model agent end to end: prompts from files, the OpenAI SDK against a loopback server, parse retry,
self-reflection with a persisted experience library, and no ground truth in anything sent to the model."""

from __future__ import annotations

import json
import re

import pytest

from core.agents.models.base import config_for
from core.agents.models.clients import make_client
from core.agents.reflection import ExperienceLibrary
from core.agents.vlm_agent import VLMAgent
from core.backends.profile import load_backend
from core.evaluation.client import EvaluatorClient
from core.evaluation.tasks import load_task
from core.paths import TASKS_DIR
from core.recording.reader import EpisodeReader
from core.session.runner import EpisodeRunner, RunOptions
from tests.loopback import LoopbackProvider, Scripted, openai_body

KEY = "sk-loopback-KEY-42"


def reply(action: str, said: str = "progressing") -> Scripted:
    return Scripted(200, openai_body(json.dumps({"thought": f"I will {action}", "self_assessment": said,
                                                 "action": action})))


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    provider = LoopbackProvider()
    yield provider
    provider.close()


def test_a_model_episode_is_prompted_parsed_reflected_and_recorded(world, builtin_profile, server, tmp_path):
    actions = load_backend("builtin").action_set()
    task = load_task(TASKS_DIR / "q03_pier_navigation.yaml", builtin_profile.flags)
    server.replies.extend([
        reply("MoveForward"),
        Scripted(200, openai_body("I think I should walk on.")),   # unusable: retried with the error
        reply("move forward"),
        Scripted(200, openai_body("MEMORY: I walked east twice.\nLESSON: Follow the road to reach the sea.")),
        reply("RotateLeft", "unsure"),
    ])
    client = make_client(config_for("gpt-5.2", base_url=f"http://127.0.0.1:{server.port}/v1", backoff_s=0.01))
    library = ExperienceLibrary(["Signs name the shops."], tmp_path / "experience" / "episode.json", "test")
    agent = VLMAgent(client, actions, "visual_guided", reflection_every=2, library=library)
    with EvaluatorClient.launch(world.pid) as evaluator:
        evaluator.wait_locked()
        result = EpisodeRunner(world, evaluator, agent, actions, task, RunOptions("visual_guided", step_budget=3),
                               tmp_path / "vlm.h5").run()
        positions = [(s.x, s.y, s.tick) for s in evaluator.samples]
    assert result.steps_used == 3
    with EpisodeReader(tmp_path / "vlm.h5") as episode:
        records = episode.records()
        metadata = episode.metadata
        raw = (tmp_path / "vlm.h5").read_bytes()
    assert [r["action"] for r in records] == ["MoveForward", "MoveForward", "RotateLeft"]
    assert "--- retry ---" in records[1]["raw_reply"] and records[1]["parse_error"] is None
    assert records[0]["usage"]["input_tokens"] == 812 and records[0]["usage"]["cost_usd"] > 0
    assert records[2]["memory"] == "I walked east twice." and "LESSON" in records[2]["reflection"]
    assert "memory" not in records[2]["usage"] and "reflection" not in records[2]["usage"]
    # the lessons each prompt showed are recorded with its step; the new lesson is shown from step 3 on
    assert [r["lessons"] for r in records] == [["Signs name the shops."], ["Signs name the shops."],
                                              ["Signs name the shops.", "Follow the road to reach the sea."]]
    assert json.loads(library.path.read_text())["lessons"] == ["Signs name the shops.",
                                                               "Follow the road to reach the sea."]
    assert metadata["agent_config"]["experience_start"]["lessons"] == ["Signs name the shops."]
    assert metadata["agent_config"]["model"]["model"] == "gpt-5.2"
    assert KEY.encode() not in raw  # the key never reaches the recording

    prompts = [json.dumps(r["body"]) for r in server.requests]
    assert task.instructions.visual_guided[:40] in prompts[0]
    assert "Your previous answer could not be used" in prompts[2]
    numbers = {f"{value:.2f}" for x, y, _ in positions for value in (x, y) if abs(value) > 1}
    for text in prompts:
        assert not re.search(r"\b(x|y|z|tick|flags?|coordinates?|map_id)\b\s*[:=]", text, re.I)
        leaked = [n for n in numbers if n in text]
        assert not leaked, f"ground truth {leaked} reached a prompt"


def test_with_audio_clip_each_prompt_carries_the_previous_steps_recorded_sound(world, builtin_profile, server,
                                                                                tmp_path):
    import base64
    import io
    import wave

    import numpy as np

    from core.agents.observe import ObservationOptions
    from core.episode.load import load_episode

    actions = load_backend("builtin").action_set()
    task = load_task(TASKS_DIR / "q03_pier_navigation.yaml", builtin_profile.flags)
    server.replies.extend([reply("MoveForward"), reply("MoveForward"), reply("RotateLeft")])
    client = make_client(config_for("openai:gpt-4o-audio-preview", base_url=f"http://127.0.0.1:{server.port}/v1",
                                    backoff_s=0.01))
    agent = VLMAgent(client, actions, "goal_only")
    options = RunOptions("goal_only", step_budget=3, observation=ObservationOptions(audio="clip"))
    with EvaluatorClient.launch(world.pid) as evaluator:
        evaluator.wait_locked()
        result = EpisodeRunner(world, evaluator, agent, actions, task, options, tmp_path / "heard.h5").run()
    assert result.audio == "on" and result.audio_mode == "clip"
    episode = load_episode(tmp_path / "heard.h5")
    sent: list[np.ndarray | None] = []
    for request in server.requests:
        parts = [p for p in request["body"]["messages"][1]["content"] if p["type"] == "input_audio"]
        if not parts:
            sent.append(None)
            continue
        with wave.open(io.BytesIO(base64.b64decode(parts[0]["input_audio"]["data"]))) as wav:
            sent.append(np.frombuffer(wav.readframes(wav.getnframes()), "<i2").reshape(-1, wav.getnchannels()))
    assert sent[0] is None  # the first step: nothing heard yet
    for step in (1, 2):  # the prompt of step n+1 carried exactly the recorded sound of step n
        recorded = episode.step_audio(step - 1)
        assert recorded is not None and len(recorded.samples) > 0
        assert np.array_equal(sent[step], recorded.samples)


def test_with_audio_spectrogram_the_picture_sent_is_the_picture_recorded(world, builtin_profile, server, tmp_path):
    import base64

    import cv2
    import numpy as np

    from core.agents.observe import ObservationOptions

    actions = load_backend("builtin").action_set()
    task = load_task(TASKS_DIR / "q03_pier_navigation.yaml", builtin_profile.flags)
    server.replies.extend([reply("MoveForward"), reply("MoveForward")])
    client = make_client(config_for("gpt-5.2", base_url=f"http://127.0.0.1:{server.port}/v1", backoff_s=0.01))
    options = RunOptions("goal_only", step_budget=2, observation=ObservationOptions(audio="spectrogram"))
    with EvaluatorClient.launch(world.pid) as evaluator:
        evaluator.wait_locked()
        EpisodeRunner(world, evaluator, VLMAgent(client, actions, "goal_only"), actions, task, options,
                      tmp_path / "seen.h5").run()
    images = [p["image_url"]["url"] for p in server.requests[1]["body"]["messages"][1]["content"]
              if p["type"] == "image_url"]
    assert len(images) == 2  # the frame, then the sound of step 1
    sent = cv2.imdecode(np.frombuffer(base64.b64decode(images[1].partition(",")[2]), np.uint8), cv2.IMREAD_COLOR)
    with EpisodeReader(tmp_path / "seen.h5") as episode:
        assert "hearing" in episode.image_sets()
        assert episode.step_image("hearing", 0) is None  # step 1 heard nothing yet
        recorded = episode.step_image("hearing", 1)
    assert recorded is not None and np.array_equal(recorded, sent[..., ::-1])
