"""StepDetails: one step's record in full: thought, self-assessment (colour-coded), action, parse
error, usage, intervention, memory and the raw reply."""

from __future__ import annotations

import html
import json

from PySide6.QtWidgets import QTextBrowser

from core.episode.records import StepRecord
from core.episode.units import with_units

ASSESSMENT_HTML = {"progressing": "#287a3c", "stuck": "#c62828", "unsure": "#c88c00"}


def _row(name: str, value: str) -> str:
    return f"<tr><td style='color:#666; padding-right:8px; vertical-align:top'>{name}</td><td>{value}</td></tr>"


class StepDetails(QTextBrowser):
    def __init__(self) -> None:
        super().__init__()
        self.setOpenLinks(False)
        self.setMinimumWidth(260)
        self.setPlaceholderText("Select a step.")
        self.shown_step: int | None = None
        self._units: str | None = "m"

    def set_units(self, units: str | None) -> None:
        """The episode's position units (None: unsaid), for the distance an intervention pushed."""
        self._units = units

    def show_record(self, record: StepRecord) -> None:
        self.shown_step = record.step
        decision = record.decision
        said = (decision.self_assessment if decision is not None else "") or "-"
        colour = ASSESSMENT_HTML.get(said, "#555")
        params = dict(decision.action_params) if decision is not None else {}
        thought = decision.thought if decision is not None else (f"({record.damaged})" if record.damaged else "")
        rows = [_row("Step", f"<b>{record.step}</b> ({html.escape(record.source)})"),
                _row("Action", f"<b>{html.escape(record.action)}</b> {html.escape(json.dumps(params))}"),
                _row("Self-assessment", f"<b style='color:{colour}'>{html.escape(said)}</b>"),
                _row("Thought", html.escape(thought))]
        if decision is not None and decision.parse_error:
            rows.append(_row("Parse error", f"<span style='color:#c62828'>{html.escape(decision.parse_error)}</span>"))
        if record.intervention is not None:
            rows.append(_row("Intervention", html.escape(json.dumps(record.intervention.to_json()))))
        usage = dict(decision.usage) if decision is not None else {}
        if usage:
            rows.append(_row("Usage", html.escape(", ".join(f"{k} {v}" for k, v in usage.items()))))
        for name, text in (("Memory", decision.memory if decision else ""),
                           ("Reflection", decision.reflection if decision else "")):
            if text:
                rows.append(_row(name, html.escape(text)))
        if decision is not None and decision.lessons:
            shown = "".join(f"<li>{html.escape(lesson)}</li>" for lesson in decision.lessons)
            rows.append(_row("Lessons shown", f"<ul style='margin:0'>{shown}</ul>"))
        if record.intervention_displacement:
            pushed = with_units(round(record.intervention_displacement, 2), self._units)
            rows.append(_row("Pushed", f"{html.escape(pushed)} by the intervention (not counted as the agent's move)"))
        raw = html.escape((decision.raw_reply if decision is not None else "")
                          or "(no model reply: a human or intervention step)")
        self.setHtml(f"<table>{''.join(rows)}</table><p style='color:#666'>Raw reply</p>"
                     f"<pre style='white-space:pre-wrap'>{raw}</pre>")
