"""StepDetails: one step's record in full: thought, self-assessment (colour-coded), action, parse
error, usage, intervention, memory and the raw reply."""

from __future__ import annotations

import html
import json
from typing import Any

from PySide6.QtWidgets import QTextBrowser

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

    def show_record(self, step: int, record: dict[str, Any]) -> None:
        self.shown_step = step
        said = str(record.get("self_assessment") or "-")
        colour = ASSESSMENT_HTML.get(said, "#555")
        rows = [_row("Step", f"<b>{step}</b> ({html.escape(str(record.get('source', '?')))})"),
                _row("Action", f"<b>{html.escape(str(record.get('action')))}</b> "
                     f"{html.escape(json.dumps(record.get('action_params') or {}))}"),
                _row("Self-assessment", f"<b style='color:{colour}'>{html.escape(said)}</b>"),
                _row("Thought", html.escape(str(record.get("thought") or "")))]
        if record.get("parse_error"):
            rows.append(_row("Parse error", f"<span style='color:#c62828'>{html.escape(record['parse_error'])}</span>"))
        if record.get("intervention"):
            rows.append(_row("Intervention", html.escape(json.dumps(record["intervention"]))))
        usage = record.get("usage") or {}
        if usage:
            rows.append(_row("Usage", html.escape(", ".join(f"{k} {v}" for k, v in usage.items()))))
        for key in ("memory", "reflection"):
            if record.get(key):
                rows.append(_row(key.capitalize(), html.escape(str(record[key]))))
        if record.get("lessons"):
            shown = "".join(f"<li>{html.escape(str(lesson))}</li>" for lesson in record["lessons"])
            rows.append(_row("Lessons shown", f"<ul style='margin:0'>{shown}</ul>"))
        if record.get("intervention_displacement"):
            rows.append(_row("Pushed", f"{float(record['intervention_displacement']):.2f} m by the intervention "
                                       "(not counted as the agent's move)"))
        raw = html.escape(str(record.get("raw_reply") or "(no model reply: a human or intervention step)"))
        self.setHtml(f"<table>{''.join(rows)}</table><p style='color:#666'>Raw reply</p>"
                     f"<pre style='white-space:pre-wrap'>{raw}</pre>")
