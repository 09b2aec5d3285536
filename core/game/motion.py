"""How far a stick held for a while moves the character on open flat ground: a backend's motion calibration.

A continuous move is ineffective when the character moved less than `share` of what the same stick and
duration move it in the open (docs/metrics.md). An absolute ε cannot serve continuous control: a slow but
free walk (a stick just past the dead zone, held 2 s, moves 0.09 m in the built-in world) would be an
ineffective move, and a full stick scraping along a wall for a fraction of its stride would not.

The table is measured once per backend by the privileged driver (`python main.py backend calibrate NAME`,
core/evaluation/calibrate.py) and stored in the backend file under `continuous_motion` (docs/backend-format.md).
Between its points the expected distance is interpolated bilinearly in stick magnitude and hold time;
below the first magnitude it falls linearly to 0 at the dead zone, below the first duration to 0 at 0 s,
and past the longest duration it grows in proportion to the time held.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field, model_validator

DEFAULT_SHARE = 0.25
# What `backend calibrate` measures: stick magnitudes from just past the dead zone to full, and hold times
# from one tick's worth to the longest continuous action.
CALIBRATION_MAGNITUDES = (0.2, 0.35, 0.5, 0.75, 1.0)
CALIBRATION_SECONDS = (0.1, 0.25, 0.5, 1.0, 2.0)


class MotionCalibration(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    share: float = Field(default=DEFAULT_SHARE, gt=0, lt=1, description="a move below this share of the open-ground "
                                                                  "distance is ineffective")
    dead_zone: float = Field(ge=0, lt=1, description="stick magnitude that moves nothing")
    magnitudes: list[float] = Field(min_length=1, description="stick magnitudes measured, ascending")
    seconds: list[float] = Field(min_length=1, description="hold times measured, ascending")
    metres: list[list[float]] = Field(description="metres[i][j]: moved at magnitudes[i] held seconds[j]")
    run_factor: float = Field(default=1.0, gt=0, description="how much farther the run button (B) carries a move")
    start_state: str = Field(default="", description="where it was measured (open flat ground)")
    measured: str = Field(default="", description="when and by what")

    @model_validator(mode="after")
    def _table_shape(self) -> MotionCalibration:
        for name, values in (("magnitudes", self.magnitudes), ("seconds", self.seconds)):
            if any(b <= a for a, b in itertools.pairwise(values)) or values[0] <= 0:
                raise ValueError(f"{name} must be positive and strictly ascending")
        if self.magnitudes[0] <= self.dead_zone or self.magnitudes[-1] > 1.0:
            raise ValueError("magnitudes must lie past the dead zone and at most 1")
        if len(self.metres) != len(self.magnitudes) or any(len(row) != len(self.seconds) for row in self.metres):
            shape = f"{len(self.magnitudes)} rows (magnitudes) of {len(self.seconds)} (seconds)"
            raise ValueError(f"metres must be {shape}")
        if any(not math.isfinite(v) or v < 0 for row in self.metres for v in row):
            raise ValueError("metres must be finite and not negative")
        return self

    def expected_metres(self, left_x: float, left_y: float, seconds: float, running: bool = False) -> float:
        """How far this stick, held `seconds`, moves the character on open flat ground."""
        magnitude = min(math.hypot(left_x, left_y), 1.0)
        if magnitude <= self.dead_zone or seconds <= 0:
            return 0.0
        by_time = [_along(self.magnitudes, [row[j] for row in self.metres], magnitude, self.dead_zone)
                   for j in range(len(self.seconds))]
        metres = _along(self.seconds, by_time, seconds, 0.0)
        return metres * (self.run_factor if running else 1.0)

    def threshold_m(self, left_x: float, left_y: float, seconds: float, running: bool = False) -> float:
        """Metres below which this continuous move is ineffective."""
        return self.share * self.expected_metres(left_x, left_y, seconds, running)


def _along(points: Sequence[float], values: Sequence[float], at: float, zero_at: float) -> float:
    """Piecewise-linear value at `at`: 0 at `zero_at`, through (points, values); proportional past the end."""
    if at >= points[-1]:
        return values[-1] * (at - zero_at) / (points[-1] - zero_at)
    upper = bisect.bisect_right(points, at)
    low_x, low_y = (zero_at, 0.0) if upper == 0 else (points[upper - 1], values[upper - 1])
    high_x, high_y = points[upper], values[upper]
    return low_y + (high_y - low_y) * (at - low_x) / (high_x - low_x)
