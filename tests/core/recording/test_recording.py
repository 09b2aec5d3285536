"""Episode files: what is written is what is read, and a kill -9 loses nothing already flushed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import h5py
import numpy as np
import pytest

from core.paths import PROJECT_ROOT
from core.recording.reader import EpisodeFileError, EpisodeReader
from core.recording.writer import EpisodeWriter

SHAPE = (36, 64, 3)


def _numbers(step: int) -> dict:
    return {"step": step, "time": 1000.0 + step, "tick_before": step * 15, "tick_after": step * 15 + 15,
            "latency_s": 0.25, "displacement": 2.0, "ineffective": 0, "source": "agent"}


def test_a_written_episode_reads_back(tmp_path):
    path = tmp_path / "episode.h5"
    writer = EpisodeWriter(path, {"task_id": "q01", "granularity": "goal_only", "agent": "random",
                                  "privileged": False}, SHAPE, image_sets=("current", "left"))
    frames = [np.full(SHAPE, i, np.uint8) for i in range(3)]
    for i, frame in enumerate(frames):
        writer.add_step(_numbers(i), {"thought": f"step {i} — naïve ünïcode", "action": "MoveForward"},
                        {"current": frame, "left": None})
        writer.add_samples([{"time": 1.0 * i, "tick": i, "map_id": 1, "x": i, "y": -i, "z": 0, "facing": 0,
                             "camera_yaw": 0, "camera_pitch": -12, "flags": 1 << 40, "dialogue_active": 0}])
    writer.finish({"success": True, "steps_used": 3, "end_reason": "success"})
    with EpisodeReader(path) as episode:
        assert episode.step_count == 3 and episode.complete
        assert episode.metadata["task_id"] == "q01" and episode.result["success"] is True
        assert episode.record(1)["thought"] == "step 1 — naïve ünïcode" and episode.record(1)["source"] == "agent"
        assert np.array_equal(episode.image("current", 2), frames[2])
        assert not episode.image("left", 0).any()
        assert episode.samples()["flags"][0] == 1 << 40
        assert episode.image_sets() == ["current", "left"]


def test_an_episode_survives_a_kill_minus_nine(tmp_path):
    path = tmp_path / "killed.h5"
    script = textwrap.dedent(f"""
        import numpy as np
        from core.recording.writer import EpisodeWriter
        writer = EpisodeWriter({str(path)!r}, {{"task_id": "kill"}}, {SHAPE})
        step = 0
        while True:
            writer.add_step({{"step": step, "time": 0.0, "tick_before": 0, "tick_after": 1, "latency_s": 0.0,
                             "displacement": 0.0, "ineffective": 0, "source": "agent"}},
                            {{"thought": "x" * 500}}, {{"current": np.full({SHAPE}, step % 256, np.uint8)}})
            print(step, flush=True)
            step += 1
    """)
    flushed = -1
    # `with`: the pipe is closed and the writer reaped however the loop ends.
    with subprocess.Popen([sys.executable, "-c", script], cwd=PROJECT_ROOT, stdout=subprocess.PIPE,
                          text=True) as writer:
        try:
            while flushed < 40:
                flushed = int(writer.stdout.readline())
        finally:
            os.kill(writer.pid, signal.SIGKILL)
    with h5py.File(path, "r") as plain:  # plain h5py opens it
        assert plain["steps"]["table"].shape[0] >= flushed + 1
    with EpisodeReader(path) as episode:
        assert episode.step_count >= flushed + 1 and not episode.complete
        assert episode.record(flushed)["thought"] == "x" * 500
        assert int(episode.image("current", flushed)[0, 0, 0]) == flushed % 256


def test_foreign_files_are_refused(tmp_path):
    path = tmp_path / "other.h5"
    with h5py.File(path, "w") as f:
        f.attrs["format"] = "something-else"
    with pytest.raises(EpisodeFileError, match="is not a PokeGym episode file"):
        EpisodeReader(path)
    (tmp_path / "text.h5").write_text("hello")
    with pytest.raises(EpisodeFileError, match="cannot open"):
        EpisodeReader(tmp_path / "text.h5")
