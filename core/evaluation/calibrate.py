"""Measure a backend's motion calibration: how far each stick, held for each duration, moves the character on
open flat ground (core/game/motion.py). PRIVILEGED: it reads positions from the evaluator, like the scripted
driver; it runs once per backend and its table is stored in the backend file (docs/backend-format.md).

Each measurement walks forward from where the last one left off and then back the same way (the stick
reversed), so the character stays on the open ground it started on and games whose reset means a restart
(Minetest) need only one. Both legs are measured; if they disagree, something was in the way, and the
calibration stops with where that happened instead of storing a table that would misjudge every move.
"""

from __future__ import annotations

import datetime
import math
import time
from collections.abc import Callable, Sequence

from core.evaluation.client import EvaluatorClient
from core.evaluation.stepping import StepProtocol
from core.game.connection import GameConnection
from core.game.motion import CALIBRATION_MAGNITUDES, CALIBRATION_SECONDS, DEFAULT_SHARE, MotionCalibration
from core.game.pad import Button, PadState

LEG_AGREEMENT = 0.2  # forward and back may differ by this share before the ground counts as not open


class CalibrationError(RuntimeError):
    """The ground was not open (a leg was blocked), or the game did not move at all."""


def calibrate_motion(game: GameConnection, evaluator: EvaluatorClient, start_state: str, dead_zone: float,
                     magnitudes: Sequence[float] = CALIBRATION_MAGNITUDES,
                     seconds: Sequence[float] = CALIBRATION_SECONDS, settle_s: float = 0.0,
                     share: float = DEFAULT_SHARE, progress: Callable[[str], None] | None = None) -> MotionCalibration:
    game.reset(start_state)
    protocol = StepProtocol(game, evaluator, settle_s)
    where = evaluator.sample_after(time.time())  # just after a reset: keyed by the wall clock

    def leg(pad: PadState, hold: float) -> float:
        nonlocal where
        after = protocol.end(game.hold(pad, hold))
        moved = math.hypot(after.x - where.x, after.y - where.y)
        where = after
        return moved

    def there_and_back(magnitude: float, hold: float, buttons: frozenset[Button] = frozenset()) -> float:
        out = leg(PadState(left_y=magnitude, buttons=buttons), hold)
        back = leg(PadState(left_y=-magnitude, buttons=buttons), hold)
        if max(out, back) > 0 and abs(out - back) > LEG_AGREEMENT * max(out, back):
            raise CalibrationError(
                f"at stick {magnitude:g} held {hold:g} s the character moved {out:.2f} m out and {back:.2f} m back "
                f"near ({where.x:.1f}, {where.y:.1f}): something is in the way. Choose a start state on open flat "
                "ground with room ahead and behind (--start-state)")
        return (out + back) / 2

    metres: list[list[float]] = []
    for magnitude in magnitudes:
        row: list[float] = []
        for hold in seconds:
            row.append(round(there_and_back(magnitude, hold), 4))
            if progress is not None:
                progress(f"stick {magnitude:g} held {hold:g} s: {row[-1]:.3f} m")
        metres.append(row)
    if metres[-1][-1] <= 0:
        raise CalibrationError("a full stick held for the longest duration did not move the character: is the game "
                               "taking input (focus), and is the start state free to walk?")
    full = seconds.index(1.0) if 1.0 in seconds else len(seconds) - 1
    running = there_and_back(1.0, seconds[full], frozenset({Button.B}))
    run_factor = round(running / metres[-1][full], 3) if metres[-1][full] > 0 else 1.0
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    return MotionCalibration(share=share, dead_zone=dead_zone, magnitudes=list(magnitudes), seconds=list(seconds),
                             metres=metres, run_factor=run_factor, start_state=start_state,
                             measured=f"{stamp} by `python main.py backend calibrate` (privileged driver, there and "
                                      "back along the camera's forward axis)")
