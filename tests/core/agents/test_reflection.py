"""Self-reflection is reproducible: a run starts from an explicit experience library, snapshots it, records the
lessons each prompt showed, and merges what its episodes learned in a fixed order, with parallel workers."""

from __future__ import annotations

import itertools
import json
import threading

import pytest

from core.agents.reflection import ExperienceError, ExperienceLibrary, merge_libraries
from core.recording.reader import EpisodeReader
from core.session.batch import BatchError, run_batch
from core.session.runner import RunOptions
from tests.loopback import LoopbackProvider, Scripted, openai_body

KEY = "sk-loopback-reflection"


@pytest.fixture
def model(monkeypatch):
    """A loopback model: reflections get a numbered lesson, every other prompt a MoveForward."""
    numbers = itertools.count(1)
    lock = threading.Lock()

    def answer(request):
        text = json.dumps(request["body"])
        if "You summarise your own play briefly." in text:
            with lock:
                number = next(numbers)
            return Scripted(200, openai_body(f"MEMORY: walked north.\nLESSON: lesson number {number}"))
        return Scripted(200, openai_body('{"thought": "on", "self_assessment": "progressing", '
                                         '"action": "MoveForward"}'))

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    provider = LoopbackProvider(responder=answer)
    yield provider
    provider.close()


def _run(model, out, experience_from=None, workers=2):
    options = {"base_url": f"http://127.0.0.1:{model.port}/v1", "reflection_every": 2,
               "experience_from": experience_from}
    return run_batch("q08_site_navigation,q04_clock_interaction", "goal", "model:gpt-5.2", 1, workers, out,
                     RunOptions(step_budget=4), lambda *_: None, options)


def test_a_run_starts_from_the_named_library_and_merges_what_it_learned(model, tmp_path):
    earlier = tmp_path / "earlier.json"
    earlier.write_text(json.dumps({"lessons": ["Bridges cross the stream."]}))
    out = tmp_path / "run"
    results = _run(model, out, experience_from=earlier)
    assert len(results) == 2 and all(r["end_reason"] != "error" for r in results)

    start = json.loads((out / "experience" / "start.json").read_text())
    assert start["lessons"] == ["Bridges cross the stream."] and start["source"] == str(earlier)
    keys = sorted(r["key"] for r in results)
    learned = []
    for result in sorted(results, key=lambda r: r["key"]):
        with EpisodeReader(out / result["episode"]) as episode:
            snapshot = episode.metadata["agent_config"]["experience_start"]
            records = episode.records()
        assert snapshot["lessons"] == ["Bridges cross the stream."] and len(snapshot["sha256"]) == 64
        # each step records the lessons its prompt showed; the episode's own lesson appears after its reflection
        assert records[0]["lessons"] == ["Bridges cross the stream."]
        own = json.loads((out / "experience" / "episodes" / f"{result['key']}.json").read_text())["lessons"]
        assert own[0] == "Bridges cross the stream." and len(own) == 2
        assert records[-1]["lessons"] == own
        learned.append(own[1])
    merged = json.loads((out / "experience" / "library.json").read_text())["lessons"]
    # the run's fixed episode order, whichever worker finished first
    order = [json.loads((out / "experience" / "episodes" / f"{key}.json").read_text())["lessons"][1] for key in keys]
    assert sorted(order) == sorted(learned)
    assert merged[0] == "Bridges cross the stream." and sorted(merged[1:]) == sorted(order)


def test_a_run_never_inherits_a_library_silently(model, tmp_path):
    out = tmp_path / "run"
    results = _run(model, out, workers=1)
    for result in results:
        with EpisodeReader(out / result["episode"]) as episode:
            assert episode.metadata["agent_config"]["experience_start"]["lessons"] == []
            assert episode.records()[0]["lessons"] == []
    assert json.loads((out / "experience" / "start.json").read_text())["source"] == "empty"
    # resuming the same folder from another library would mix two starting points in one run
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"lessons": ["Something else."]}))
    with pytest.raises(BatchError, match="was started from the experience library 'empty'"):
        _run(model, out, experience_from=other)


def test_a_damaged_or_missing_library_is_refused_with_a_reason(tmp_path):
    damaged = tmp_path / "damaged.json"
    damaged.write_text('{"lessons": ["half')
    with pytest.raises(ExperienceError, match="cannot be read"):
        ExperienceLibrary.load(damaged)
    with pytest.raises(ExperienceError, match="does not exist"):
        ExperienceLibrary.load(tmp_path / "missing.json")
    (tmp_path / "not_a_library.json").write_text('{"notes": []}')
    with pytest.raises(ExperienceError, match="no list of lessons"):
        ExperienceLibrary.load(tmp_path / "not_a_library.json")


def test_saving_is_atomic_and_merging_is_ordered(tmp_path):
    path = tmp_path / "episode.json"
    library = ExperienceLibrary(["a"], path)
    threads = [threading.Thread(target=library.add, args=(f"lesson {i}",)) for i in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert json.loads(path.read_text())["lessons"][0] in ("a", "lesson 0", "lesson 1")  # always whole JSON
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # no temporary file left behind
    start = ExperienceLibrary(["a"])
    first, second = ExperienceLibrary(["a", "b", "c"]), ExperienceLibrary(["a", "c", "d"])
    assert merge_libraries(start, [first, second]).lessons == ["a", "b", "c", "d"]
    assert merge_libraries(start, [second, first]).lessons == ["a", "c", "d", "b"]
