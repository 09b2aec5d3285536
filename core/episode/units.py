"""What an episode's positions are in, for what people read: plot axes, scale bars, radii.

Positions are in the game's own units, as its memory profile reads them (`units` of its x field: "m" for the
built-in world, "nodes" for Minetest, Red Eclipse's own "units" of about 80 a second). Nothing judged depends
on them; they only name distances and choose round lengths to draw.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any


def recorded_units(metadata: Mapping[str, Any]) -> str | None:
    """What an episode's x and y are in (metadata `position_units`); None: the profile did not say. Files
    recorded before it was kept: the built-in world's (the one game that records a map outline) are in metres,
    and any other game's are unsaid."""
    if "position_units" not in metadata:
        return "m" if metadata.get("map_outline") else None
    units = metadata.get("position_units")
    return units if isinstance(units, str) and units else None


def round_length(shortest: float) -> float:
    """The first round length (1, 2 or 5 x 10^k) at least `shortest` long: grid steps and scale bars in any
    game's units. 1 for a length that is not a positive number."""
    if not (shortest > 0 and math.isfinite(shortest)):
        return 1.0
    power = 10.0 ** math.floor(math.log10(shortest))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= shortest * (1 - 1e-9))


def with_units(value: float, units: str | None) -> str:
    """A distance as people read it: "3.5 m", "500 units"; the bare number where the units are unsaid."""
    return f"{value:g} {units}" if units else f"{value:g}"
