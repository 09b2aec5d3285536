"""MetricsBar: step / budget, ineffective moves, deadlock indicator, success, tokens and latency.

Success reads "Success: not yet" while an episode may still succeed, "Success: yes" once it has, and
"Success: failed" once it ended without, or "not judged" when it was stopped or broke (set_outcome)."""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QWidget

from core.episode.metrics import DEADLOCK_K
from core.episode.model import StepTotals

_GREY = "color: #5f6368"
_NOT_JUDGED = "Not judged: the agent neither succeeded nor failed (the status line says why)."
UNJUDGED_TIP = ("Unjudged: the game has no memory profile, so nothing read where the character was or judged "
                "success (free play).")
# How an ended episode reads: (text, style, tooltip) by outcome (success, failed, or the end reason).
OUTCOMES = {"success": ("Success: yes", "color: #1b7a2f; font-weight: bold", ""),
            "failed": ("Success: failed", "color: #c62828", ""),
            "stopped": ("Success: stopped", _GREY, _NOT_JUDGED),
            "interrupted": ("Success: interrupted", _GREY, _NOT_JUDGED),
            "error": ("Success: error", "color: #b06000", _NOT_JUDGED),
            "unjudged": ("Success: unjudged", _GREY, UNJUDGED_TIP)}
NO_STEPS = StepTotals(step=0, ineffective_moves=0, movement_steps=0, consecutive_im=0, tokens=0, cost_usd=0.0,
                      latency_sum_s=0.0, count=0)


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

    def reset(self, budget: int, judged: bool = True) -> None:
        """A new episode of `budget` steps; `judged` False: nothing reads positions (no memory profile), so its
        ineffective moves are unknown and shown as such, never as 0."""
        self._budget = budget
        self._judged = judged
        self._ended: bool | None = None  # None while the episode can still succeed; else whether it did
        self.show_totals(None)

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

    def show_totals(self, totals: StepTotals | None, success: bool = False) -> None:
        """The running figures after a step (None: before the first), `success` once it was met by then."""
        totals = totals or NO_STEPS
        consecutive = totals.consecutive_im
        deadlock = " — DEADLOCK" if consecutive >= DEADLOCK_K else ""
        self.labels["step"].setText(f"Step {totals.step} / {self._budget}")
        if not self._judged:
            self.labels["ims"].setText("IMs – (no positions)")
            self.labels["ims"].setToolTip(UNJUDGED_TIP)
            self.labels["consecutive"].setText("Consecutive IMs –")
            self.labels["consecutive"].setStyleSheet("")
        else:
            self.labels["ims"].setText(f"IMs {totals.ineffective_moves} ({100 * totals.im_rate:.0f}%)")
            self.labels["ims"].setToolTip("")
            self.labels["consecutive"].setText(f"Consecutive IMs {consecutive}{deadlock}")
            self.labels["consecutive"].setStyleSheet("color: #c62828; font-weight: bold" if deadlock else "")
        if self._ended is None and not self._judged:
            text, style, tip = OUTCOMES["unjudged"]
            self.labels["success"].setText(text)
            self.labels["success"].setStyleSheet(style)
            self.labels["success"].setToolTip(tip)
        elif self._ended is None:
            self.labels["success"].setText("Success: yes" if success else "Success: not yet")
            self.labels["success"].setStyleSheet("color: #1b7a2f; font-weight: bold" if success else "")
            self.labels["success"].setToolTip("")
        self.labels["tokens"].setText(f"Tokens {totals.tokens}  ${totals.cost_usd:.3f}")
        self.labels["latency"].setText(f"Mean latency {totals.mean_latency_s:.2f}s")
