"""Ctrl+C in a wide run: `python main.py run --workers 16` of a model agent (the official OpenAI SDK against a
loopback server answering in 0.3 s), stopped while some episodes step and the rest wait for their turn to
start. It stops within 10 s, leaves no world or evaluator behind, and leaves a folder that resumes: no result,
no error, every episode file that was started finished and marked interrupted."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from core.agents.models.loopback import LoopbackProvider
from core.cli.bench_model_server import ModelStandIn
from core.recording.reader import EpisodeReader
from core.session.run_folder import finished_keys, read_rows
from tests.cli_process import CliProcess, command_line, gone, wait_until

WIDTH = 16
KEY = "sk-test-width-0123456789"


def _ours(pid: int) -> list[int]:
    """Every process started for the run (worlds and evaluators carry the run's pid as their owner)."""
    mark = f"--owner-pid {pid}"
    return [int(entry.name) for entry in Path("/proc").iterdir()
            if entry.name.isdigit() and mark in (command_line(int(entry.name)) or "") and not gone(int(entry.name))]


def test_ctrl_c_stops_a_16_worker_run_within_10_s_and_leaves_a_folder_that_resumes(tmp_path):
    server = LoopbackProvider(ModelStandIn(0.3), keep_alive=True, keep_requests=False)
    out = tmp_path / "run"
    env = {**os.environ, "OPENAI_API_KEY": KEY}
    run = CliProcess(["run", "--tasks", "q08_site_navigation", "--granularity", "goal", "--agent",
                      "model:openai:test-model", "--base-url", f"http://127.0.0.1:{server.port}/v1", "--trials",
                      str(WIDTH), "--workers", str(WIDTH), "--budget", "200", "--out", str(out)], env=env)
    try:
        wait_until(lambda: len(list((out / "episodes").glob("*.h5"))) >= 3, 60, "three episodes stepping")
        started = _ours(run.pid)
        assert started, "no world or evaluator found for the run"
        run.interrupt()
        stopping = time.monotonic()
        assert run.wait(timeout=10) == 130, run.text("stderr")
        assert time.monotonic() - stopping <= 10
        assert _ours(run.pid) == [] and all(gone(pid) for pid in started)
    finally:
        run.close()
        server.close()
    said = re.search(r"stopped: (\d+) episode\(s\) interrupted and (\d+) not started", run.text("stderr"))
    assert said is not None, run.text("stderr")
    interrupted, waiting = int(said[1]), int(said[2])
    assert interrupted >= 3 and interrupted + waiting == WIDTH
    # A resume runs every episode again: none has a result or an error, each started one says it was interrupted.
    assert finished_keys(out) == set() and read_rows(out / "errors.jsonl") == ([], [])
    files = sorted((out / "episodes").glob("*.h5"))
    assert len(files) >= interrupted
    for path in files:
        with EpisodeReader(path) as episode:
            assert episode.result["end_reason"] == "interrupted"
