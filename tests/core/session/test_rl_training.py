"""The training script in docs/ runs: Stable-Baselines3's PPO on the registered environment, two environments
in subprocesses, a tiny step count. Skipped, with the reason, where the `train` extra is not installed."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

from core.paths import PROJECT_ROOT

# Looked up, not imported: PyTorch and Stable-Baselines3 take seconds to import, and every test worker collects
# this module though one runs it (the script imports them in its own process).
pytestmark = pytest.mark.skipif(any(importlib.util.find_spec(name) is None for name in ("stable_baselines3", "torch")),
                                reason="needs the train extra and PyTorch: see docs/rl.md")


def test_the_documented_ppo_script_trains_on_two_worlds_and_saves_a_model(tmp_path):
    done = subprocess.run([sys.executable, "docs/train_sb3.py", "--envs", "2", "--timesteps", "64", "--n-steps", "16",
                           "--budget", "8", "--out", str(tmp_path)], cwd=PROJECT_ROOT, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "model.zip").stat().st_size > 0
    assert "total_timesteps" in (tmp_path / "log" / "progress.csv").read_text().splitlines()[0]  # the log, not /tmp
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["timesteps"] >= 64
    assert len(summary["episode_rewards"]) >= 4  # episodes of 8 steps ended and were scored by the dense reward
