"""MetricsBar: step / budget, ineffective moves, deadlock indicator, success, tokens and latency.

Success reads "Success: not yet" while an episode may still succeed, "Success: yes" once it has, and
"Success: failed" once it ended without, or "not judged" when it was stopped or broke (set_outcome)."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QHBoxLayout, QLabel, QWidget

_GREY = "color: #5f6368"
_NOT_JUDGED = "Not judged: the agent neither succeeded nor failed (the status line says why)."
# How an ended episode reads: (text, style, tooltip) by outcome (success, failed, or the end reason).
OUTCOMES = {"success": ("Success: yes", "color: #1b7a2f; font-weight: bold", ""),
            "failed": ("Success: failed", "color: #c62828", ""),
            "stopped": ("Success: stopped", _GREY, _NOT_JUDGED),
            "interrupted": ("Success: interrupted", _GREY, _NOT_JUDGED),
            "error": ("Success: error", "color: #b06000", _NOT_JUDGED)}


class MetricsBar(QWidget):
    def __init__(self) -> None:
        super().__init__()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 2, 6, 2)
        self.labels: dict[str, QLabel] = {}
        for key in ("step", "ims", "consecutive", "success", "tokens", "latency"):
            label = QLabel("")
            self.labels[key] = label
            layout.addWidget(label)
        layout.addStretch(1)
        self.reset(0)

    def reset(self, budget: int) -> None:
        self._budget = budget
        self._tokens = 0
        self._cost = 0.0
        self._latencies: list[float] = []
        self._ended: bool | None = None  # None while the episode can still succeed; else whether it did
        self.update_metrics({"step": 0, "ineffective_moves": 0, "im_rate": 0.0, "consecutive": 0, "success": False})

    def show_budget(self, budget: int) -> None:
        """Before Start: the budget the chosen task and settings will run with."""
        if self._budget != budget:
            self.reset(budget)

    def set_outcome(self, success: bool | None, end_reason: str = "") -> None:
        """The episode ended with (True) or without (False) success; None: it is still going. An episode that
        ended without success is not a failure when the user stopped it, a batch was cut short or the game or
        evaluator broke (`end_reason`): the agent was not judged, as the status line says too."""
        self._ended = success
        if success is None:
            return
        text, style, tip = OUTCOMES.get("success" if success else end_reason, OUTCOMES["failed"])
        self.labels["success"].setText(text)
        self.labels["success"].setStyleSheet(style)
        self.labels["success"].setToolTip(tip)

    @property
    def budget(self) -> int:
        return self._budget

    def set_usage(self, tokens: int, cost: float, mean_latency: float) -> None:
        """Totals so far, for a replayed step (the live view adds them step by step instead)."""
        self._tokens, self._cost, self._latencies = tokens, cost, [mean_latency]

    def add_usage(self, usage: dict[str, Any], latency: float) -> None:
        self._tokens += int(usage.get("input_tokens", 0)) + int(usage.get("output_tokens", 0))
        self._cost += float(usage.get("cost_usd", 0.0))
        self._latencies.append(latency)

    def update_metrics(self, metrics: dict[str, Any]) -> None:
        consecutive = int(metrics.get("consecutive", 0))
        deadlock = " — DEADLOCK" if consecutive >= 3 else ""
        self.labels["step"].setText(f"Step {metrics.get('step', 0)} / {self._budget}")
        rate = 100 * metrics.get("im_rate", 0)
        self.labels["ims"].setText(f"IMs {metrics.get('ineffective_moves', 0)} ({rate:.0f}%)")
        self.labels["consecutive"].setText(f"Consecutive IMs {consecutive}{deadlock}")
        self.labels["consecutive"].setStyleSheet("color: #c62828; font-weight: bold" if deadlock else "")
        if self._ended is None:
            self.labels["success"].setText("Success: yes" if metrics.get("success") else "Success: not yet")
            self.labels["success"].setStyleSheet("color: #1b7a2f; font-weight: bold" if metrics.get("success") else "")
            self.labels["success"].setToolTip("")
        self.labels["tokens"].setText(f"Tokens {self._tokens}  ${self._cost:.3f}")
        mean = sum(self._latencies) / len(self._latencies) if self._latencies else 0.0
        self.labels["latency"].setText(f"Mean latency {mean:.2f}s")
