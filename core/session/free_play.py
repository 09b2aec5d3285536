"""Free play: what an episode plays on a backend with no memory profile yet (`memory_profile: none`).

Nothing reads the game's memory, so there is no task to judge: the agent plays from a start state for a
step budget and the episode records frames, actions and sound with no positions and no success. Its
result is `unjudged` (docs/run-folder.md): neither a success nor a failure. It stands where a Task does
in a batch run (EpisodeSpec, the runner) and offers the same few attributes they read.
"""

from __future__ import annotations

from dataclasses import dataclass

FREE_PLAY_ID = "free_play"
UNJUDGED = "unjudged"  # the end_reason of an episode played to its budget with nothing to judge it
UNJUDGED_WHY = "no memory profile"  # what the report and the studio say, and the episode file's marker
DEFAULT_STEPS = 50
# What a model agent is told: there is no goal to hide, and nothing in it is ground truth.
INSTRUCTION = "Explore the game freely: there is no goal in this episode."


@dataclass(frozen=True)
class FreePlay:
    """An unjudged episode's plan: where it starts (a start state name; None: the game as it launches, for a
    backend that defines none) and how many steps it plays."""

    start: str | None
    step_budget: int = DEFAULT_STEPS

    @property
    def id(self) -> str:
        # The start is part of the id, so free play from two start states into one folder never shares a key.
        return FREE_PLAY_ID if self.start is None else f"{FREE_PLAY_ID}_{_id_part(self.start)}"

    @property
    def quest(self) -> str:
        return FREE_PLAY_ID

    @property
    def category(self) -> str:
        return FREE_PLAY_ID

    @property
    def title(self) -> str:
        return "Free play" + (f" from {self.start}" if self.start is not None else "")

    def instruction(self, granularity: str) -> str:
        return INSTRUCTION

    def start_for_reset(self) -> str | None:
        return self.start

    def goal_point(self) -> None:
        return None


def _id_part(name: str) -> str:
    """A start state's name as task ids are spelt (lower case letters, digits and _)."""
    return "".join(c if c.isascii() and c.isalnum() else "_" for c in name.lower())
