"""What the Live view's status bar says about an episode's end and an intervention's progress."""

from __future__ import annotations

from typing import Any

from studio.status_messages import describe_error

END_REASONS = {"budget": "the step budget was used up", "error": "an error"}


def describe_end(result: dict[str, Any]) -> tuple[str, bool]:
    """The status line for a finished episode, and whether it reports an error (`error_kind`: how it was
    caught, studio/status_messages.py)."""
    steps = result.get("steps_used")
    if result.get("error"):
        said = describe_error(str(result["error"]), str(result.get("error_kind", "error")))
        return f"Episode stopped by an error after {steps} steps (recording kept): {said.text}", True
    if result.get("success"):
        if result.get("success_source") == "human":
            return (f"Success met on your step {result.get('success_step') or steps}: human-assisted, not the agent's "
                    "(reports count it apart). Recording kept.", False)
        return f"Episode succeeded at step {result.get('success_step') or steps} (recording kept).", False
    if result.get("end_reason") == "stopped":
        # The user ended it: not a failure of the agent, so no failure category is suggested here.
        return f"Episode stopped by user after {steps} steps (recording kept; not counted as a failure).", False
    reason = END_REASONS.get(str(result.get("end_reason")), str(result.get("end_reason")))
    category = result.get("failure_category_suggestion")
    suggested = f"; suggested category: {category}" if category else ""
    return f"Episode failed after {steps} steps: {reason}{suggested}.", False


def describe_intervention(item: dict[str, Any]) -> str:
    """A hint's progress (queued, delivered, undelivered), or an intervention not carried out; "" otherwise."""
    status, kind = item.get("status"), item.get("kind")
    if kind == "text":
        hint = str((item.get("params") or {}).get("hint", ""))
        quoted = f"“{hint if len(hint) <= 60 else hint[:57] + '…'}”"
        if status == "queued":
            return f"Hint queued for step {item.get('for_step')}: {quoted} (the agent reads it in its next prompt)."
        if status == "delivered":
            return f"Hint delivered: the agent's prompt for step {item.get('for_step')} carried {quoted}."
        if status == "undelivered":
            return f"Hint not delivered: the episode ended before the agent's next prompt. {quoted} was not used."
        return ""
    if status == "undelivered":
        return f"{str(kind).replace('_', ' ').capitalize()} not carried out: the episode ended first."
    return ""
