"""Who made a step: the one definition every layer uses (the evaluator's judging, the recording's table, the
episode's records and metrics, the report and the studio)."""

from __future__ import annotations

from typing import Literal

Source = Literal["agent", "privileged", "human", "intervention"]
# The order the episode file stores a step's source in (the step table's index): never reorder.
SOURCES: tuple[Source, ...] = ("agent", "human", "intervention", "privileged")
# Steps an agent chose (the privileged driver stands in for one when tasks are validated): scored as its moves.
AGENT_SOURCES: tuple[Source, ...] = ("agent", "privileged")
# Steps whose end the evaluator judges: acting steps, a human's too (never an intervention).
JUDGED_SOURCES: tuple[Source, ...] = ("agent", "privileged", "human")
