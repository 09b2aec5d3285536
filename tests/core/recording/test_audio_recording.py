"""Sound recorded with every episode (/audio, docs/episode-format.md): each step's ticks, losslessly, readable by
plain h5py; a damaged chunk costs that step's sound only; a kill -9 loses nothing flushed; files without sound
(older ones, a world whose sound is off) open as before."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import h5py
import numpy as np
import pytest

from core.agents.base import RandomAgent
from core.audio.clip import AudioLayout
from core.backends.profile import load_backend
from core.episode import Episode, load_episode
from core.evaluation.client import EvaluatorClient
from core.evaluation.profile import load_profile
from core.evaluation.tasks import load_task
from core.game.builtin import BuiltinWorld
from core.paths import PROFILES_DIR, PROJECT_ROOT, TASKS_DIR
from core.recording.reader import EpisodeFileError, EpisodeReader
from core.recording.writer import AUDIO_ROW_FRAMES, EpisodeWriter
from core.session.interventions import InterventionPolicy
from core.session.runner import EpisodeRunner, RunOptions
from tests.damaged_files import flip_chunk

SHAPE = (36, 64, 3)
STEPS = 8


def _numbers(step: int) -> dict:
    return {"step": step, "time": 0.0, "tick_before": step * 15, "tick_after": step * 15 + 15, "latency_s": 0.0,
            "displacement": 0.0, "ineffective": 0, "source": "agent"}


def _run(path: Path, audio: str = "on", steps: int = STEPS) -> Episode:
    """A real episode on the built-in world: a random agent, pushed back after 2 ineffective moves."""
    profile = load_profile(PROFILES_DIR / "builtin_world.yaml")
    actions = load_backend("builtin").action_set()
    task = load_task(TASKS_DIR / "q08_site_navigation.yaml", profile.flags)
    options = RunOptions(step_budget=steps, interventions=InterventionPolicy("physical", 2))
    with BuiltinWorld.launch(renderer="software", audio=audio) as world, \
            EvaluatorClient.launch(world.pid) as evaluator:
        evaluator.wait_locked()
        runner = EpisodeRunner(world, evaluator, RandomAgent(actions, seed=3), actions, task, options, path)
        runner.run()
    return runner.episode


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> tuple[Path, Episode]:
    path = tmp_path_factory.mktemp("audio") / "episode.h5"
    return path, _run(path)


def test_every_step_carries_the_sound_of_its_ticks(recorded):
    path, live = recorded
    loaded = load_episode(path)
    assert loaded.audio_state == live.audio_state == "on" and loaded.result.audio == "on"
    assert loaded.audio_format == live.audio_format == AudioLayout(24000, 2)
    assert len(loaded) == STEPS
    per_tick = 24000 // 30
    for index in range(STEPS):
        step, clip = loaded.step(index), loaded.step_audio(index)
        first, last = loaded.step_audio_ticks(index)
        assert first == step.tick_before + 1 and last >= step.tick_after  # a push after the step is its sound too
        assert clip.rate == 24000 and clip.samples.dtype == np.int16
        assert clip.samples.shape == ((last - first + 1) * per_tick, 2)
        assert np.array_equal(clip.samples, live.step_audio(index).samples)  # the file holds what was played
        assert loaded.audio_problem(index) is None
    everything = np.concatenate([loaded.step_audio(i).samples for i in range(STEPS)])
    assert np.abs(everything).max() > 1000  # a town, not silence
    with h5py.File(path, "r") as plain:  # any HDF5 reader decodes the sound (shuffle + gzip, standard filters)
        index = plain["audio/steps"][:]
        rows = plain["audio/pcm"][index[3, 0]:index[3, 0] + -(-index[3, 1] // AUDIO_ROW_FRAMES)]
        assert np.array_equal(rows.reshape(-1, 2)[:index[3, 1]], loaded.step_audio(3).samples)


def test_a_damaged_audio_chunk_costs_only_that_steps_sound(recorded, tmp_path):
    path, _ = recorded
    damaged = Path(shutil.copyfile(path, tmp_path / "damaged.h5"))
    with EpisodeReader(path) as reader:
        first_row = int(reader.audio_index()[2, 0])
    flip_chunk(damaged, "audio/pcm", (first_row, 0, 0))
    with EpisodeReader(damaged) as reader, pytest.raises(EpisodeFileError) as caught:
        reader.step_audio(2)
    assert caught.value.problem.startswith("damaged audio at step 3") and caught.value.step_index == 2
    assert caught.value.part == "/audio/pcm at step 3"
    original, episode = load_episode(path), load_episode(damaged)
    assert episode.step_audio(2) is None and episode.audio_problem(2).startswith("damaged audio at step 3")
    assert len(episode) == STEPS and not episode.damaged_records
    for index in (0, 1, *range(3, STEPS)):
        assert np.array_equal(episode.step_audio(index).samples, original.step_audio(index).samples)
        assert episode.audio_problem(index) is None
    with EpisodeReader(damaged) as reader:
        assert all(reader.step_image("current", i) is not None or i == 0 for i in range(STEPS))


def test_a_file_without_sound_opens_as_before(recorded, tmp_path):
    path, _ = recorded
    older = Path(shutil.copyfile(path, tmp_path / "older.h5"))
    with h5py.File(older, "r+") as file:  # as written before sound was recorded
        del file["audio"]
    episode = load_episode(older)
    assert len(episode) == STEPS and episode.audio_format is None
    assert all(episode.step_audio(i) is None and episode.audio_problem(i) is None for i in range(STEPS))
    with EpisodeReader(older) as reader:
        assert reader.audio_layout() is None and reader.step_audio(0) is None and len(reader.audio_index()) == 0


def test_a_world_with_its_sound_off_records_none_and_says_so(tmp_path):
    path = tmp_path / "silent.h5"
    _run(path, audio="off", steps=2)
    episode = load_episode(path)
    assert episode.audio_state == "off" and episode.result.audio == "off" and episode.audio_format is None
    with h5py.File(path, "r") as file:
        assert "audio" not in file


def test_written_sound_reads_back_bit_for_bit(tmp_path):
    path = tmp_path / "synthetic.h5"
    rng = np.random.default_rng(4)
    clips = [rng.integers(-32768, 32767, (n, 2), dtype=np.int16) for n in (12000, 0, AUDIO_ROW_FRAMES, 1)]
    writer = EpisodeWriter(path, {"task_id": "x"}, SHAPE, audio=AudioLayout(24000, 2))
    for step, clip in enumerate(clips):
        writer.add_step(_numbers(step), {}, {"current": np.zeros(SHAPE, np.uint8)})
        writer.add_audio(step, clip, step * 15 + 1, step * 15 + 15)
    writer.add_step(_numbers(4), {}, {"current": np.zeros(SHAPE, np.uint8)})  # its sound was not kept
    writer.add_step(_numbers(5), {}, {"current": np.zeros(SHAPE, np.uint8)})
    writer.add_audio(5, clips[0], 76, 90)
    writer.finish({"success": False})
    with EpisodeReader(path) as reader:
        for step, clip in enumerate(clips):
            assert np.array_equal(reader.step_audio(step), clip)
        assert reader.step_audio(4) is None and np.array_equal(reader.step_audio(5), clips[0])
        assert reader.step_audio(6) is None  # beyond the index: no sound
        assert reader.audio_index()[5].tolist() == [4, 12000, 76, 90]  # rows: 2 + 0 + 1 + 1 before it


def test_the_sound_survives_a_kill_minus_nine(tmp_path):
    path = tmp_path / "killed.h5"
    script = textwrap.dedent(f"""
        import numpy as np
        from core.audio.clip import AudioLayout
        from core.recording.writer import EpisodeWriter
        writer = EpisodeWriter({str(path)!r}, {{"task_id": "kill"}}, {SHAPE}, audio=AudioLayout(24000, 2))
        step = 0
        while True:
            writer.add_step({{"step": step, "time": 0.0, "tick_before": 0, "tick_after": 1, "latency_s": 0.0,
                             "displacement": 0.0, "ineffective": 0, "source": "agent"}},
                            {{}}, {{"current": np.zeros({SHAPE}, np.uint8)}}, flush=False)
            writer.add_audio(step, np.full((12000, 2), step, np.int16), 1, 15)
            writer.flush()
            print(step, flush=True)
            step += 1
    """)
    flushed = -1
    with subprocess.Popen([sys.executable, "-c", script], cwd=PROJECT_ROOT, stdout=subprocess.PIPE,
                          text=True) as writer:
        try:
            while flushed < 30:
                flushed = int(writer.stdout.readline())
        finally:
            os.kill(writer.pid, signal.SIGKILL)
    episode = load_episode(path)
    assert len(episode) >= flushed + 1 and episode.result is None
    for index in range(flushed + 1):
        clip = episode.step_audio(index)
        assert clip is not None and clip.samples.shape == (12000, 2) and (clip.samples == index).all()
    assert not episode.audio_problems


def test_a_recordings_audio_state_says_whether_the_game_could_make_sound():
    from core.game.audio_ring import AudioFormat
    from core.game.connection import Capability, GameInfo, audio_state

    def info(audio: AudioFormat | None, capabilities: set, switched_off: bool = False) -> GameInfo:
        return GameInfo("g", 1, "lockstep", 30.0, 64, 36, (), frozenset(capabilities), audio, switched_off)

    heard = AudioFormat(24000, 2, 800)
    assert audio_state(info(heard, {Capability.AUDIO})) == "on"
    assert audio_state(info(None, set(), switched_off=True)) == "off"  # the built-in world with `--audio off`
    assert audio_state(info(None, set())) == "unavailable"  # an external game without a sound source


def test_a_damaged_audio_header_costs_the_sound_not_the_episode(recorded, tmp_path):
    path, _ = recorded
    damaged = Path(shutil.copyfile(path, tmp_path / "header.h5"))
    with h5py.File(damaged, "r+") as file:
        file["audio"].attrs["channels"] = 7  # does not fit the stored rows
    with EpisodeReader(damaged) as reader, pytest.raises(EpisodeFileError, match="do not fit together") as caught:
        reader.audio_layout()
    assert caught.value.part == "/audio"
    episode = load_episode(damaged)
    assert len(episode) == STEPS and episode.audio_format is None
    assert all(episode.audio_problem(i).startswith(f"damaged audio at step {i + 1}") for i in range(STEPS))
