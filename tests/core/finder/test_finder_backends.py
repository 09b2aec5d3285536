"""The memory finder's protocol timings for an external backend (core/finder/backends.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.finder.backends import resolve
from core.finder.motion import MotionPlan
from tests.fake_games.backends import fake_backend


def _with_settle(folder: Path, seconds: float | None) -> Path:
    fake_backend(folder)
    path = folder / "fake.yaml"
    if seconds is not None:
        # step_settle_s is a top-level key; put it right after memory_profile
        text = path.read_text().replace("\nexternal:", f"\nstep_settle_s: {seconds}\nexternal:", 1)
        path.write_text(text)
    return path


@pytest.mark.parametrize(("step_settle_s", "expected"), [(None, MotionPlan().settle_seconds),
                                                         (0.15, MotionPlan().settle_seconds), (1.0, 1.0)])
def test_the_rest_after_each_protocol_step_is_at_least_the_backends_step_settle(tmp_path, step_settle_s, expected):
    # Red Eclipse's player slides on for ~0.7 s after a key is released: with the default 0.4 s rest the true
    # position moved during 'stand' steps and was thrown out, and only noise was ranked.
    with resolve(str(_with_settle(tmp_path, step_settle_s))) as backend:
        assert backend.plan.settle_seconds == pytest.approx(expected)
