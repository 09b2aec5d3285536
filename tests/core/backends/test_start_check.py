"""A start state that moves the player with its macro (a teleport, a console command, keys) is checked: where a
memory profile reads the game, by the position `backend record-start` recorded; without one, by the picture at
rest against the recorded reference frame. A start that is off is started again, then fails with the distance.

The game is the fake window game with its Ryujinx-like guest RAM (x follows the Right arrow), on our own Xvfb.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import cv2
import numpy as np
import pytest
import yaml

from core.backends.profile import BackendProfile, parse_backend
from core.backends.session import BackendSession
from core.backends.start_check import StartCheckError
from core.paths import PROJECT_ROOT
from tests.external_support import needs_x11_tools, on_display, xvfb
from tests.fake_games.backends import GUEST_RAM_PROFILE, fake_backend

__all__ = ["on_display", "xvfb"]  # fixtures
pytestmark = needs_x11_tools

# `east`: the macro holds Right for half a second, so the player starts about 3 units east of the spawn.
STATES = """    start: {}
    east:
      macro: [{pad: {right_x: 1.0}, seconds: 0.5}]"""


def backend_with(folder: Path, check: dict[str, object] | None, profile: bool = True) -> BackendProfile:
    states = STATES
    if check is not None:
        states += "\n      check: " + yaml.safe_dump(check, default_flow_style=True, width=400).strip()
    memory = folder / "fake_za.yaml"
    memory.write_text(GUEST_RAM_PROFILE)
    made = fake_backend(folder, extra_args=", --guest-ram", profile=str(memory) if profile else "none",
                        start_states=states)
    return parse_backend(made.path.read_text(), made.path)


def record_start(backend: BackendProfile, display: str) -> dict[str, object]:
    """What `backend record-start` prints, as the user pastes it."""
    done = subprocess.run([sys.executable, "main.py", "backend", "record-start", str(backend.path), "east",
                           "--rest", "0.3"], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "DISPLAY": display})
    assert done.returncode == 0, done.stderr
    block = done.stdout[done.stdout.index("check:"):]
    return yaml.safe_load(block)["check"]


def test_a_recorded_position_passes_and_a_wrong_one_is_retried_then_fails_with_the_distance(tmp_path, on_display):
    recorded = record_start(backend_with(tmp_path, None), on_display)
    position = recorded["position"]
    assert isinstance(position, list) and 2.0 < position[0] < 4.5 and abs(position[1]) < 0.01
    assert (tmp_path / str(recorded["image"])).is_file()

    with BackendSession.open(backend_with(tmp_path, recorded), start_state="east") as session:
        session.prepare("east")
        assert session.restarts == 0  # where the recording says: nothing started again
        assert session.evaluator is not None
        assert session.evaluator.sample_after(time.time()).x == pytest.approx(position[0], abs=1.0)

    wrong = {**recorded, "position": [position[0] + 20.0, 0.0, 0.0], "retries": 1, "rest_s": 0.1}
    with BackendSession.open(backend_with(tmp_path, wrong), start_state="east") as session:
        with pytest.raises(StartCheckError) as failure:
            session.prepare("east")
        assert session.restarts == 1  # one fresh start, then the error
    message = str(failure.value)
    assert "after 2 start(s)" in message and "from the recorded position" in message
    distance = float(message.split("the player is ")[1].split(" ")[0])
    assert 19.0 < distance < 21.0
    assert "backend record-start" in message


def test_without_a_memory_profile_the_picture_at_rest_is_checked(tmp_path, on_display):
    recorded = record_start(backend_with(tmp_path, None, profile=False), on_display)
    assert "position" not in recorded  # nothing reads the game's memory
    with BackendSession.open(backend_with(tmp_path, recorded, profile=False), start_state="east") as session:
        session.prepare("east")
        assert session.restarts == 0

    reference = tmp_path / str(recorded["image"])
    picture = cv2.imread(str(reference))
    cv2.imwrite(str(reference), (255 - picture).astype(np.uint8))  # a start that looks nothing like it
    unlike = backend_with(tmp_path, {**recorded, "retries": 0}, profile=False)
    with BackendSession.open(unlike, start_state="east") as session, \
            pytest.raises(StartCheckError, match="differs from the reference"):
        session.prepare("east")


def test_a_position_check_without_a_profile_is_said_once_and_not_judged(tmp_path, on_display, caplog):
    backend = backend_with(tmp_path, {"position": [3.0, 0.0]}, profile=False)
    with caplog.at_level(logging.WARNING), BackendSession.open(backend, start_state="east") as session:
        session.prepare("east")
        session.prepare("east")
    said = [r.getMessage() for r in caplog.records if "is not checked" in r.getMessage()]
    assert said == ["start state 'east' is not checked: its check has only a position, and this backend has no "
                    "memory profile to read it with"]


def test_a_check_with_nothing_to_check_is_refused_with_the_key(tmp_path):
    from core.backends.profile import BackendFileError

    with pytest.raises(BackendFileError, match="start check needs a position"):
        backend_with(tmp_path, {"tolerance": 2.0})
