"""The Live view's episode form: task, instructions, agent and model, paradigm, observation, reflection,
interventions, budget, seed, the world's clock and the pace to watch a lockstep episode at. It only holds
choices; the window acts on them."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

from PySide6.QtCore import QSettings, Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from core.agents.models.base import PRESETS
from core.session.interventions import Mode

GRANULARITIES = {"Visual-guided": "visual_guided", "Step-guided": "step_guided", "Goal-only": "goal_only"}
# How fast a lockstep episode plays in wall-clock time, for a person to watch (studio/observed_game.py paces it).
PACES = {"as fast as it runs": None, "0.5× real time": 0.5, "1× real time": 1.0, "2× real time": 2.0,
         "4× real time": 4.0}
DEFAULT_PACE = "1× real time"
HEARING = {"hears nothing": "none", "hears: spectrogram picture": "spectrogram", "hears: audio clip": "clip"}
CLOCKS = {"Lockstep (the game waits for the agent)": "lockstep", "Real time (30 fps, like an emulator)": "realtime"}
REALTIME_CAPTION = next(caption for caption, mode in CLOCKS.items() if mode == "realtime")


@dataclass(frozen=True)
class LiveChoices:
    task_id: str
    granularity: str = "goal_only"
    agent_spec: str = "random"
    model_id: str | None = None
    paradigm: str = "discrete"
    previous_frame: bool = False
    side_views: bool = False
    audio: str = "none"  # what the agent hears of its last step: none, clip or spectrogram (docs/observations.md)
    reflection_every: int = 0  # 0 = off
    intervention: Mode = "none"
    intervention_after: int = 3
    budget: int | None = None  # None = the task's own budget
    frames_every_ticks: int = 0  # continuous frames between steps for replay, 0 = off
    seed: int | None = None  # None = a fresh random seed for every Start (recorded with the episode)
    pace: float | None = None  # lockstep only: watch at this multiple of real time (None = as fast as it runs)


def available_agents() -> tuple[list[str], list[str]]:
    """Agent specs that can run now, and a line per model preset that needs a key first."""
    ready, missing = ["random", "random+listen"], []
    for name, preset in PRESETS.items():
        if any(os.environ.get(env) for env in preset.key_env):
            ready.append(f"model:{name}")
        else:
            missing.append(f"{name}: set {' or '.join(preset.key_env)}")
    return ready, missing


class LiveControls(QWidget):
    sig_clock_changed = Signal(str)  # "lockstep" or "realtime": the world must be restarted in that mode
    sig_pace_changed = Signal(object)  # the new pace (a float, or None for as fast as it runs)

    def __init__(self, task_ids: list[str]) -> None:
        super().__init__()
        form = QFormLayout(self)
        self.task = QComboBox()
        self.task.addItems(task_ids)
        self.granularity = QComboBox()
        self.granularity.addItems(list(GRANULARITIES))
        self.agent = QComboBox()
        ready, missing = available_agents()
        self.agent.addItems(ready)
        self.agent.setToolTip("Model agents appear when their API key is in the environment.\n" + "\n".join(missing))
        self.model_id = QLineEdit()
        self.model_id.setPlaceholderText("preset's model id")
        self.paradigm = QComboBox()
        self.paradigm.addItems(["discrete", "continuous"])
        self.previous_frame = QCheckBox("previous frame")
        self.side_views = QCheckBox("left and right views")
        self.hearing = QComboBox()
        self.hearing.addItems(list(HEARING))
        self.hearing.setToolTip("What the agent hears of its last step (docs/observations.md):\n"
                                "a picture of the sound (any vision model), or the sound itself (models that\n"
                                "take audio: Gemini, OpenAI's audio models; others are refused at Start).")
        observation = QVBoxLayout()
        observation.addWidget(self.previous_frame)
        observation.addWidget(self.side_views)
        observation.addWidget(self.hearing)
        self.reflection = QCheckBox("every")
        self.reflection_every = QSpinBox()
        self.reflection_every.setRange(1, 50)
        self.reflection_every.setValue(5)
        self.reflection_every.setSuffix(" steps")
        reflection = QHBoxLayout()
        reflection.addWidget(self.reflection)
        reflection.addWidget(self.reflection_every)
        self.intervention = QComboBox()
        self.intervention.addItems(["none", "text", "physical"])
        self.intervention_after = QSpinBox()
        self.intervention_after.setRange(1, 50)
        self.intervention_after.setValue(3)
        self.intervention_after.setPrefix("after ")
        self.intervention_after.setSuffix(" IMs")
        intervention = QHBoxLayout()
        intervention.addWidget(self.intervention)
        intervention.addWidget(self.intervention_after)
        self.budget = QSpinBox()
        self.budget.setRange(0, 20_000)
        self.budget.setSpecialValueText("task's budget")
        self.frames_every = QSpinBox()
        self.frames_every.setRange(0, 120)
        self.frames_every.setSpecialValueText("off")
        self.frames_every.setSuffix(" ticks")
        self.fixed_seed = QCheckBox("fixed")
        self.fixed_seed.setToolTip("Unticked: every Start draws a fresh random seed (recorded with the episode).\n"
                                   "Ticked: every Start uses this seed, to repeat an episode exactly.")
        self.seed = QSpinBox()
        self.seed.setRange(0, 2**31 - 1)
        self.seed.setEnabled(False)
        seed = QHBoxLayout()
        seed.addWidget(self.fixed_seed)
        seed.addWidget(self.seed, 1)
        self.clock = QComboBox()
        self.clock.addItems(list(CLOCKS))
        self._chosen_clock: str | None = None  # the built-in world's choice, while an external game shows its own
        self.pace = QComboBox()
        self.pace.addItems(list(PACES))
        self.pace.setCurrentText(DEFAULT_PACE)
        self.pace.setToolTip("Lockstep only: how fast to play the episode for you to watch. The game's own time,\n"
                             "and so the recording, is the same at every pace; only the wait between ticks changes.")
        for label, field in (("Task", self.task), ("Instructions", self.granularity), ("Agent", self.agent),
                             ("Model id", self.model_id), ("Actions", self.paradigm), ("Observation", observation),
                             ("Self-reflection", reflection), ("Auto intervention", intervention),
                             ("Step budget", self.budget), ("Seed", seed),
                             ("Frames between steps", self.frames_every), ("World clock", self.clock),
                             ("Watch at", self.pace)):
            form.addRow(label, field)
        for box in self._boxes().values():  # long entries must not widen the dock: they elide instead
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            box.setMinimumContentsLength(8 if box in (self.paradigm, self.intervention) else 14)
        self.agent.currentTextChanged.connect(self._agent_changed)
        self.clock.currentTextChanged.connect(self._clock_chosen)
        self.pace.currentTextChanged.connect(lambda text: self.sig_pace_changed.emit(PACES[text]))
        self.fixed_seed.toggled.connect(self.seed.setEnabled)
        self._agent_changed(self.agent.currentText())

    def _agent_changed(self, spec: str) -> None:
        is_model = spec.startswith("model:")
        for widget in (self.model_id, self.reflection, self.reflection_every):
            widget.setEnabled(is_model)

    @Slot(str)
    def set_tasks(self, task_ids: list[str]) -> None:
        """Another game's task suite (after the backend changed)."""
        self.task.blockSignals(True)
        self.task.clear()
        self.task.addItems(task_ids)
        self.task.blockSignals(False)
        if task_ids:
            self.task.currentTextChanged.emit(self.task.currentText())

    def _clock_chosen(self, text: str) -> None:
        self.pace.setEnabled(CLOCKS[text] == "lockstep")  # a real-time world runs at its own pace
        self.sig_clock_changed.emit(CLOCKS[text])

    @property
    def pace_rate(self) -> float | None:
        return PACES[self.pace.currentText()]

    @Slot(str)
    def add_task(self, task_id: str) -> None:
        """A task saved in the studio joins the task list (once)."""
        if self.task.findText(task_id) < 0:
            self.task.addItem(task_id)

    @property
    def clock_mode(self) -> str:
        """The built-in world's clock, as chosen (an external game runs in real time whatever it says)."""
        return CLOCKS[self._chosen_clock or self.clock.currentText()]

    def show_game_clock(self, builtin: bool) -> None:
        """An external game runs in real time whatever was chosen: the box says so, greyed out, and gives the
        built-in world's choice back when the user returns to it (neither change restarts anything)."""
        self.clock.blockSignals(True)
        if not builtin and self._chosen_clock is None:
            self._chosen_clock = self.clock.currentText()
            self.clock.setCurrentText(REALTIME_CAPTION)
        elif builtin and self._chosen_clock is not None:
            self.clock.setCurrentText(self._chosen_clock)
            self._chosen_clock = None
        self.clock.blockSignals(False)
        self.clock.setEnabled(builtin)
        self.clock.setToolTip("" if builtin else "This game runs in real time: only the built-in world can wait "
                              "for the agent (lockstep).")
        self.pace.setEnabled(builtin and self.clock_mode == "lockstep")

    def choices(self) -> LiveChoices:
        return LiveChoices(
            task_id=self.task.currentText(), granularity=GRANULARITIES[self.granularity.currentText()],
            agent_spec=self.agent.currentText(), model_id=self.model_id.text().strip() or None,
            paradigm=self.paradigm.currentText(), previous_frame=self.previous_frame.isChecked(),
            side_views=self.side_views.isChecked(), audio=HEARING[self.hearing.currentText()],
            reflection_every=self.reflection_every.value() if self.reflection.isChecked() else 0,
            intervention=cast(Mode, self.intervention.currentText()),  # the combo lists the modes
            intervention_after=self.intervention_after.value(),
            budget=self.budget.value() or None, frames_every_ticks=self.frames_every.value(),
            seed=self.seed.value() if self.fixed_seed.isChecked() else None, pace=self.pace_rate)

    # -- settings (the window owns versioning) --------------------------------------------------
    def save(self, settings: QSettings) -> None:
        """Values, not captions: a reworded caption (or a translation) leaves the saved choice valid."""
        for key, box in self._boxes().items():
            shown = self._chosen_clock if box is self.clock and self._chosen_clock else box.currentText()
            settings.setValue(f"live/{key}", setting_value(self._values(key), shown))
        for key, check in self._checks().items():
            settings.setValue(f"live/{key}", check.isChecked())
        for key, spin in self._spins().items():
            settings.setValue(f"live/{key}", spin.value())
        settings.setValue("live/model_id", self.model_id.text())

    def restore(self, settings: QSettings) -> None:
        for key, box in self._boxes().items():
            caption = caption_for(self._values(key), settings.value(f"live/{key}"))
            if caption is not None and box is self.clock and self._chosen_clock is not None:
                self._chosen_clock = caption  # for the built-in world; the game on show runs in real time
            elif caption is not None and box.findText(caption) >= 0:
                box.setCurrentText(caption)
        for key, check in self._checks().items():
            check.setChecked(str(settings.value(f"live/{key}", False)).lower() == "true")
        for key, spin in self._spins().items():
            value = settings.value(f"live/{key}")
            if value is not None and str(value).lstrip("-").isdigit():
                spin.setValue(max(spin.minimum(), min(spin.maximum(), int(value))))
        self.model_id.setText(str(settings.value("live/model_id", "") or ""))
        self.pace.setEnabled(self.clock.isEnabled() and self.clock_mode == "lockstep")

    def _boxes(self) -> dict[str, QComboBox]:
        return {"task": self.task, "granularity": self.granularity, "agent": self.agent, "paradigm": self.paradigm,
                "intervention": self.intervention, "clock": self.clock, "pace": self.pace, "hearing": self.hearing}

    @staticmethod
    def _values(key: str) -> Mapping[str, object]:
        """A box's caption -> value, for the boxes whose captions are not their values."""
        return {"granularity": GRANULARITIES, "clock": CLOCKS, "pace": PACES, "hearing": HEARING}.get(key, {})

    def _checks(self) -> dict[str, QCheckBox]:
        return {"previous_frame": self.previous_frame, "side_views": self.side_views, "reflection": self.reflection,
                "fixed_seed": self.fixed_seed}

    def _spins(self) -> dict[str, QSpinBox]:
        return {"reflection_every": self.reflection_every, "intervention_after": self.intervention_after,
                "budget": self.budget, "frames_every": self.frames_every, "seed": self.seed}


def setting_value(values: Mapping[str, object], caption: str) -> str:
    """What the settings store for a box showing `caption`: its value (None: "none"), or the caption itself
    where the caption is the value (task ids, agent names)."""
    if caption not in values:
        return caption
    value = values[caption]
    return "none" if value is None else str(value)


def caption_for(values: Mapping[str, object], stored: object) -> str | None:
    """The caption to show for a stored value. Settings written before values were stored hold the caption:
    it is taken as it is (and saved as a value next time). Anything else is ignored (None)."""
    if not isinstance(stored, str):
        return None
    for caption in values:
        if setting_value(values, caption) == stored:
            return caption
    return stored  # an old caption, or a box whose captions are its values; the caller checks it exists
