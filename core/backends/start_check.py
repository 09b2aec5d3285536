"""Checking that a start state put the player where it says (the state's `check:`, docs/backend-format.md).

A game that spawns the player at random, or a teleport typed into its console that the game ignored, would
otherwise start an episode somewhere else with nothing in the results to say so. With a memory profile the
evaluator's position must lie within `tolerance` of the recorded one; without one the frame at rest must look
like the recorded reference image. `problem()` says what is wrong, in words a user can act on, or None.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import cv2
import numpy as np

from core.evaluation.client import EvaluatorClient
from core.game.connection import GameConnection
from core.game.errors import GameStartError
from core.game.external.spec import StartCheck


class StartCheckError(GameStartError):
    """A start state did not put the player where it says, even after the retries."""


def problem(check: StartCheck, game: GameConnection, evaluator: EvaluatorClient | None,
            backend_dir: Path) -> str | None:
    """What is wrong with the start the game is in now, or None when it is where the check says."""
    if check.rest_s > 0:
        time.sleep(check.rest_s)  # a real-time game: the teleport's fall or fade must end before judging
    if evaluator is not None and check.position is not None:
        return _position_problem(check, evaluator)
    if check.image is not None:
        return _image_problem(check, game, backend_dir)
    return None  # a position to check and no profile to read it with: said once, where the session starts


def unchecked_reason(check: StartCheck, judged: bool) -> str | None:
    """Why a start cannot be checked here (a position but no memory profile, and no image), or None."""
    if check.image is None and not judged:
        return "its check has only a position, and this backend has no memory profile to read it with"
    return None


def _position_problem(check: StartCheck, evaluator: EvaluatorClient) -> str | None:
    sample = evaluator.sample_after(time.time())
    recorded = check.position
    assert recorded is not None
    now = (sample.x, sample.y, sample.z)[:len(recorded)]
    distance = math.dist(now, recorded)
    if distance <= check.tolerance:
        return None
    return (f"the player is {distance:.2f} from the recorded position {_point(recorded)} "
            f"(tolerance {check.tolerance:g}), at {_point(now)}")


def _image_problem(check: StartCheck, game: GameConnection, backend_dir: Path) -> str | None:
    assert check.image is not None
    path = backend_dir / check.image
    reference = read_reference(path)
    pixels = game.latest_frame().pixels
    if reference.shape != pixels.shape:
        reference = cv2.resize(reference, (pixels.shape[1], pixels.shape[0]), interpolation=cv2.INTER_AREA)
    difference = difference_of(pixels, reference)
    if difference <= check.image_tolerance:
        return None
    return (f"the picture at rest differs from the reference {path} by {difference:.3f} "
            f"(tolerance {check.image_tolerance:g}; 0 is identical, 1 the opposite colour)")


def difference_of(pixels: np.ndarray, reference: np.ndarray) -> float:
    """Mean absolute difference of two RGB pictures of one size, 0 (identical) to 1."""
    return float(np.abs(pixels.astype(np.int16) - reference.astype(np.int16)).mean() / 255.0)


def read_reference(path: Path) -> np.ndarray:
    """A reference picture as RGB; a missing or unreadable file says which and how to make one."""
    picture = cv2.imread(str(path), cv2.IMREAD_COLOR) if path.is_file() else None
    if picture is None:
        raise StartCheckError(f"cannot read the start check's reference image {path}: record it with "
                              f"`python main.py backend record-start BACKEND STATE`")
    return cv2.cvtColor(picture, cv2.COLOR_BGR2RGB)


def _point(values: tuple[float, ...]) -> str:
    return "(" + ", ".join(f"{v:.2f}" for v in values) + ")"
