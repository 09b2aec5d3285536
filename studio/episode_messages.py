"""What the Live view's status bar says about an episode's end and an intervention's progress."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.episode.records import EpisodeResult
from core.session.interventions import InterventionProgress
from studio.status_messages import describe_error

END_REASONS = {"budget": "the step budget was used up", "error": "an error",
               "task_error": "the task is broken"}


@dataclass(frozen=True)
class EpisodeStart:
    """What the Live view hears when Start has set an episode up (before its first step)."""

    task_id: str
    budget: int
    recording: Path
    seed: int
    granularity: str


@dataclass(frozen=True)
class EpisodeEnd:
    """How a Live episode ended: its result (also when it could not run at all), the recording, and how an
    error was caught (`error_kind`, studio/status_messages.py)."""

    result: EpisodeResult
    recording: Path
    error_kind: str = "error"


def describe_end(end: EpisodeEnd) -> tuple[str, bool]:
    """The status line for a finished episode, and whether it reports an error."""
    result, steps = end.result, end.result.steps_used
    if result.error:
        said = describe_error(result.error, end.error_kind)
        return f"Episode stopped by an error after {steps} steps (recording kept): {said.text}", True
    if result.success:
        if result.success_source == "human":
            return (f"Success met on your step {result.success_step or steps}: human-assisted, not the agent's "
                    "(reports count it apart). Recording kept.", False)
        return f"Episode succeeded at step {result.success_step or steps} (recording kept).", False
    if result.end_reason == "unjudged":
        return (f"Episode played {steps} steps unjudged ({result.unjudged or 'no memory profile'}): free play, "
                "neither a success nor a failure (recording kept).", False)
    if result.end_reason == "stopped":
        # The user ended it: not a failure of the agent, so no failure category is suggested here.
        return f"Episode stopped by user after {steps} steps (recording kept; not counted as a failure).", False
    reason = END_REASONS.get(result.end_reason, result.end_reason)
    category = result.failure_category_suggestion
    suggested = f"; suggested category: {category}" if category else ""
    return f"Episode failed after {steps} steps: {reason}{suggested}.", False


def describe_intervention(progress: InterventionProgress) -> str:
    """A hint's progress (queued, delivered, undelivered), or an intervention not carried out; "" otherwise."""
    status, kind = progress.status, progress.intervention.kind
    if kind == "text":
        hint = str(progress.intervention.params.get("hint", ""))
        quoted = f"“{hint if len(hint) <= 60 else hint[:57] + '…'}”"
        if status == "queued":
            return f"Hint queued for step {progress.for_step}: {quoted} (the agent reads it in its next prompt)."
        if status == "delivered":
            return f"Hint delivered: the agent's prompt for step {progress.for_step} carried {quoted}."
        if status == "undelivered":
            return f"Hint not delivered: the episode ended before the agent's next prompt. {quoted} was not used."
        return ""
    if status == "undelivered":
        return f"{kind.replace('_', ' ').capitalize()} not carried out: the episode ended first."
    return ""
