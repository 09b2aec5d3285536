"""The episode model: what the runner appends is what the recorder writes and load_episode reads back,
with the same metrics; the recorder's thread loses nothing on close and reports a failed write."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from core.episode import (
    Episode,
    EpisodeResult,
    InterventionRecord,
    ResultSet,
    StepAppended,
    StepDecision,
    StepRecord,
    load_episode,
)
from core.episode.recorder import EpisodeRecorder, RecordingError
from core.evaluation.sample import StateSample
from core.recording.reader import EpisodeReader
from core.recording.writer import EpisodeWriter

SHAPE = (36, 64, 3)


def _step(number: int, moved: float, assessment: str = "progressing", source: str = "agent") -> StepRecord:
    decision = StepDecision("MoveForward", thought=f"step {number}", self_assessment=assessment,
                            usage={"input_tokens": 100, "output_tokens": 10, "cost_usd": 0.01},
                            latency_s=0.5, memory=f"memory {number}", reflection="r" if number == 2 else "")
    return StepRecord(step=number, source=source, tick_before=number * 15 - 15, tick_after=number * 15,  # type: ignore[arg-type]
                      time=1000.0 + number, action="MoveForward" if source == "agent" else "HumanInput",
                      decision=decision if source == "agent" else None,
                      intervention=InterventionRecord(number, "auto", "text", {"hint": "go"}) if number == 5 else None,
                      position_before=(0.0, float(number - 1)), position_after=(0.0, float(number - 1) + moved),
                      displacement=moved, movement=source == "agent", entropy_label="MoveForward")


def _sample(tick: int, y: float) -> StateSample:
    return StateSample(1000.0 + tick / 30, tick, 1, 0.0, y, 0.0, 0.0, 0.0, -12.0, 0, False)


# Steps 2-5 are ineffective (a deadlock span keyed 2..5), step 6 moves again; step 7 is a human's.
MOVES = [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.5]


def _play(episode: Episode) -> None:
    for number, moved in enumerate(MOVES, start=1):
        episode.append_samples([_sample(number * 15, float(number))])
        image = np.full(SHAPE, number, np.uint8)
        episode.append_step(_step(number, moved, "stuck" if number == 4 else "progressing",
                                  "human" if number == 7 else "agent"), {"current": image})


def test_what_the_episode_holds_is_what_the_file_gives_back(tmp_path):
    path = tmp_path / "episode.h5"
    episode = Episode({"task_id": "t"}, path)
    recorder = EpisodeRecorder(episode, EpisodeWriter(path, episode.metadata, SHAPE))
    _play(episode)
    live_metrics = episode.metrics()
    result = EpisodeResult("t", False, len(MOVES), "budget", metrics=live_metrics.to_json())
    recorder.close(result)
    episode.set_result(result)

    loaded = load_episode(path)
    assert len(loaded) == len(episode) == len(MOVES)
    assert loaded.steps() == episode.steps()  # every field, typed, including memory and reflection
    assert loaded.step(1).decision is not None and loaded.step(1).decision.reflection == "r"
    assert loaded.metrics() == live_metrics
    assert [(s.start, s.end, s.ended_by) for s in loaded.metrics().deadlocks] == [(2, 5, "agent")]
    assert [loaded.totals_at(i).consecutive_im for i in range(len(MOVES))] == [0, 1, 2, 3, 4, 0, 0]
    assert loaded.totals_at(6).tokens == 6 * 110
    assert loaded.result == result
    with EpisodeReader(path) as reader:
        assert [int(reader.image("current", i)[0, 0, 0]) for i in range(len(MOVES))] == list(range(1, 8))


def test_views_hear_every_step_in_order_and_can_stop_listening():
    episode = Episode()
    heard: list[int] = []
    unsubscribe = episode.subscribe(lambda event: heard.append(event.index)
                                    if isinstance(event, StepAppended) else None)
    episode.append_step(_step(1, 1.0))
    episode.append_step(_step(2, 0.0))
    unsubscribe()
    episode.append_step(_step(3, 0.0))
    assert heard == [0, 1] and len(episode) == 3 and episode.consecutive_im == 2
    with pytest.raises(ValueError, match="does not follow"):
        episode.append_step(_step(3, 0.0))
    results: list[EpisodeResult] = []
    episode.subscribe(lambda event: results.append(event.result) if isinstance(event, ResultSet) else None)
    episode.set_result(EpisodeResult("t", True, 3, "success", success_step=3))
    assert results and episode.marks()["success"] == [3] and episode.succeeded_by(2) and not episode.succeeded_by(1)


def test_closing_writes_every_queued_step_even_when_the_disk_is_slow(tmp_path):
    path = tmp_path / "slow.h5"
    writer = EpisodeWriter(path, {}, SHAPE)
    gate = threading.Event()
    add_step = writer.add_step

    def slow_add_step(*args, **kwargs):  # the writer thread waits until every step is queued
        gate.wait(10)
        add_step(*args, **kwargs)

    writer.add_step = slow_add_step  # type: ignore[method-assign]
    episode = Episode()
    recorder = EpisodeRecorder(episode, writer, max_pending=64)
    _play(episode)
    gate.set()
    recorder.close(None)  # cut short: no result, but nothing appended is lost
    loaded = load_episode(path)
    assert len(loaded) == len(MOVES) and loaded.result is None


def test_a_failed_write_ends_the_episode_with_the_reason(tmp_path):
    path = tmp_path / "failing.h5"
    writer = EpisodeWriter(path, {}, SHAPE)

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    writer.add_step = full_disk  # type: ignore[method-assign]
    episode = Episode()
    recorder = EpisodeRecorder(episode, writer)
    episode.append_step(_step(1, 1.0), {"current": np.zeros(SHAPE, np.uint8)})
    with pytest.raises(RecordingError, match="No space left on device"):
        for number in range(2, 50):  # the error reaches the appending thread at a later append
            episode.append_step(_step(number, 1.0))
    with pytest.raises(RecordingError):
        recorder.close(EpisodeResult("t", False, 1, "error"))
    assert load_episode(path).result is None  # closed, readable, and says it was cut short


def test_a_file_from_the_previous_version_loads_with_positions_from_its_samples(tmp_path):
    """Recordings made before the episode model hold no positions, entropy labels or IM displacement."""
    path = tmp_path / "old.h5"
    writer = EpisodeWriter(path, {"task_id": "old"}, SHAPE)
    writer.add_samples([_sample(0, 0.0).to_json()])
    for number, moved in enumerate([1.0, 0.0, 0.0, 0.0], start=1):
        writer.add_samples([_sample(number * 15, float(min(number, 1))).to_json()])  # stuck at y = 1 from step 2 on
        writer.add_step({"step": number, "time": 0.0, "tick_before": number * 15 - 15, "tick_after": number * 15,
                         "latency_s": 1.0, "displacement": moved, "ineffective": int(moved == 0), "source": "agent"},
                        {"action": "MoveForward", "thought": "on", "self_assessment": "progressing", "movement": True,
                         "usage": {}, "intervention": None}, {"current": np.zeros(SHAPE, np.uint8)})
    writer.finish({"task_id": "old", "success": False, "steps_used": 4, "end_reason": "budget",
                   "metrics": {"deadlocks": [[1, 3, False]]}})  # metrics v1: 0-based fact indices
    episode = load_episode(path)
    assert [s.position_after for s in episode] == [(0.0, 1.0)] * 4
    assert episode.step(0).position_before == (0.0, 0.0)
    assert [(s.start, s.end) for s in episode.metrics().deadlocks] == [(2, 4)]  # rescored: step numbers
    assert episode.result is not None and episode.result.metrics["deadlocks"] == [[1, 3, False]]  # kept as stored
