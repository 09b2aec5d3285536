"""Whose success an episode's is, as every table of the report counts it.

A success the agent earned was met on the agent's own step (or the privileged driver's, in task validation);
rows written before `success_source` existed count as the agent's. A success met on a human's step (someone
drove in the studio) is human-assisted: never in a success rate or a correlation point, and in the failure
taxonomy a category of its own (HUMAN_ASSISTED), not Success.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

HUMAN_ASSISTED = "Human-assisted success"


def earned(row: Mapping[str, Any]) -> bool:
    """A success the agent earned: met on the agent's own step (rows before success_source count as theirs)."""
    return bool(row.get("success")) and row.get("success_source") in (None, "agent", "privileged")


def human_assisted(row: Mapping[str, Any]) -> bool:
    """A success met on a human's step (someone drove in the studio): counted apart, never as the agent's."""
    return bool(row.get("success")) and row.get("success_source") == "human"
