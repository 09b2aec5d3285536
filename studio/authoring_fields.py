"""Validation problems shown where they are: each (field, problem) of a TaskFileError marks its widget in
the authoring form and is named by the form's own label, not by a line of a file not written yet."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from core.evaluation.tasks import TaskFileError
from studio.authoring_form import INSTRUCTIONS, AuthoringForm

MARK = "border: 2px solid #b00020;"
LABELS = {"id": "Id", "title": "Title", "quest": "Quest", "category": "Category", "step_budget": "Budget",
          "start_state": "Start state", "success": "Goal or flags (the success condition)",
          "reference_route": "Reference route", "instructions": "Instructions",
          **{f"instructions.{g}": f"{label} instructions" for g, (label, _) in INSTRUCTIONS.items()}}


def field_widget(form: AuthoringForm, field: str) -> QWidget | None:
    """The widget that edits `field` (a dotted path such as "instructions.visual_guided" or "reference_route.0")."""
    parts = field.split(".")
    if parts[0] == "instructions" and len(parts) > 1 and parts[1] in form.instructions:
        return form.instructions[parts[1]]
    return {"id": form.id, "title": form.title, "quest": form.quest, "category": form.category,
            "step_budget": form.budget, "start_state": form.start, "success": form.goal,
            "reference_route": form.route, "instructions": form.instruction_tabs}.get(parts[0])


def marked_widgets(form: AuthoringForm) -> list[QWidget]:
    return [widget for widget in (form.id, form.title, form.quest, form.category, form.budget, form.start, form.goal,
                                  form.route, form.instruction_tabs, *form.instructions.values())
            if widget.property("invalid")]


def clear_marks(form: AuthoringForm) -> None:
    for widget in marked_widgets(form):
        widget.setProperty("invalid", False)
        widget.setStyleSheet("")


def mark_problems(form: AuthoringForm, error: TaskFileError) -> str:
    """Mark each field with a problem and return one message naming them by their labels ("" when the error
    names no field, e.g. a file that cannot be written: the caller then shows the error itself)."""
    clear_marks(form)
    lines: list[str] = []
    for field, problem in error.problems:
        widget = field_widget(form, field)
        if widget is None:
            continue
        widget.setProperty("invalid", True)
        widget.setStyleSheet(MARK)
        if widget in form.instructions.values() and not any(
                w.property("invalid") for w in form.instructions.values() if w is not widget):
            form.instruction_tabs.setCurrentWidget(widget)  # the first instruction with a problem
        name = LABELS.get(field) or LABELS.get(field.split(".")[0], field)
        line = f"{name}: {problem}"
        if line not in lines:
            lines.append(line)
    if not lines:
        return ""
    first = next((w for w in marked_widgets(form) if w.focusPolicy() != Qt.FocusPolicy.NoFocus), None)
    if first is not None:
        first.setFocus()
    return "Fix the fields marked in red: " + "; ".join(lines)
