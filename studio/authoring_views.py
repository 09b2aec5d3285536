"""How the authoring panel shows a draft: the goal, the route and flags lists, the captured start,
the preview on the trajectory plot and the outcome of a try. Functions only; the panel decides when."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLabel, QListWidget, QListWidgetItem

from core.authoring import TaskDraft, TryResult
from core.episode.units import with_units
from core.evaluation.conditions import ReachSpec
from core.evaluation.sample import StateSample
from core.evaluation.tasks import Goto, InlineStart, RouteStep, route_point
from studio.authoring_form import CAPTURED
from widgets.trajectory_plot import TrajectoryPlot

COLOURS = {"error": "#b00020", "ok": "#1b7a2f", "info": ""}
FlagRow = tuple[str, bool, bool]  # flag name, the value a condition on it requires, ticked as a condition


def show_message(label: QLabel, text: str, kind: str) -> None:
    """`kind` is "error" (red), "ok" (green) or "info"; tests and style sheets read it as a property."""
    label.setText(text)
    label.setProperty("kind", kind)
    label.setStyleSheet(f"color: {COLOURS[kind]};" if COLOURS[kind] else "")


def describe_goal(goal: ReachSpec | None, units: str | None) -> str:
    if goal is None:
        return "No goal yet."
    return f"Goal: ({goal.x:g}, {goal.y:g}), radius {with_units(goal.radius, units)}"


def describe_step(number: int, step: RouteStep) -> str:
    if isinstance(step, Goto):
        return f"{number}. walk to ({step.goto[0]:g}, {step.goto[1]:g})"
    spec = step.interact
    approach = f" from ({spec.approach[0]:g}, {spec.approach[1]:g})" if spec.approach is not None else ""
    return f"{number}. press A at ({spec.target[0]:g}, {spec.target[1]:g}){approach}"


def show_route(widget: QListWidget, route: Sequence[RouteStep]) -> None:
    row = widget.currentRow()
    widget.clear()
    widget.addItems([describe_step(number, step) for number, step in enumerate(route, 1)])
    widget.setCurrentRow(min(row, widget.count() - 1))


def show_captured_start(combo: QComboBox, start: InlineStart) -> None:
    """The captured start as the combo's first item, selected (without announcing a new choice)."""
    combo.blockSignals(True)
    if combo.itemData(0) != CAPTURED:
        combo.insertItem(0, "", CAPTURED)
    flags = f" with {', '.join(start.flags)}" if start.flags else ""
    combo.setItemText(0, f"captured at ({start.pos[0]:g}, {start.pos[1]:g}){flags}")
    combo.setCurrentIndex(0)
    combo.blockSignals(False)


def flag_rows(draft: TaskDraft, sample: StateSample | None) -> list[FlagRow]:
    """Flags ticked as conditions, and flags that changed since the last capture, in the profile's order."""
    changed = set(draft.flags_changed_since_capture(sample)) if sample is not None else set()
    chosen = {f.name: f.equals for f in draft.flag_conditions}
    return [(name, chosen[name] if name in chosen else bool(sample and sample.has_flag(bit)), name in chosen)
            for bit, name in enumerate(draft.flag_names) if name in chosen or name in changed]


def show_flag_rows(widget: QListWidget, rows: list[FlagRow]) -> None:
    widget.blockSignals(True)
    widget.clear()
    for name, equals, ticked in rows:
        item = QListWidgetItem(f"{name} → {'set' if equals else 'cleared'}")
        item.setData(Qt.ItemDataRole.UserRole, (name, equals))
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
        item.setCheckState(Qt.CheckState.Checked if ticked else Qt.CheckState.Unchecked)
        widget.addItem(item)
    widget.blockSignals(False)


def show_on_plot(plot: TrajectoryPlot, start: tuple[float, float] | None, goal: ReachSpec | None,
                 route: Sequence[RouteStep]) -> None:
    if start is not None:
        plot.set_start(float(start[0]), float(start[1]))
    if goal is not None:
        plot.set_goal(goal.x, goal.y, goal.radius)
    points = [route_point(step) for step in route]
    plot.set_route(([(float(start[0]), float(start[1]))] if start is not None else []) + points)  # from the start


def describe_try(result: TryResult, budget: int) -> str:
    if result.success:  # the driver steers by ground truth: this proves the task solvable, nothing more
        return f"Solved at step {result.success_step} of {result.steps} (budget {budget}) by the scripted driver."
    return f"Not solved ({result.outcome.replace('_', ' ')}): {result.reason}"
