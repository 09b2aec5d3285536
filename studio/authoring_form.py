"""The authoring panel's widgets: the fields and capture buttons in groups (AuthoringForm, which
scrolls), and the Save / Try it bar with its messages (AuthoringBar). Widgets only: the panel
(studio/authoring_panel.py) connects them to the draft."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from core.authoring.draft import DEFAULT_BUDGET, DEFAULT_RADIUS_M

CATEGORIES = ("navigation", "interaction", "mixed")
COMBINE = {  # text -> the draft's combine, with what it means
    "all of them": ("all_of", "the goal and every ticked flag hold at the same moment"),
    "in sequence": ("sequence", "each ticked flag in the order ticked, then the goal"),
}
INSTRUCTIONS = {  # granularity -> (label, placeholder)
    "visual_guided": ("Visual-guided", "names what the agent will see: walk past the red-roofed BAKERY…"),
    "step_guided": ("Step-guided", "ordered sub-goals, no visual cues: 1. Go south. 2. …"),
    "goal_only": ("Goal-only", "the objective alone: Go to the lane."),
}
DRIVING_HELP = ("Drive to each spot first: click the game view, then hold W A S D to walk and the arrow keys to "
                "turn the camera (Space or E is A). Between episodes the keys drive the character directly; "
                "Take control (Ctrl+K) is only needed while an episode runs.")
CAPTURED = "captured"  # the start combo's item data for a captured start (named starts carry their name)


def _capture_button(text: str, tip: str) -> QPushButton:
    """A button used while driving: it takes no keyboard focus, so Space keeps pressing A, not the button."""
    button = QPushButton(text)
    button.setToolTip(tip)
    button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
    return button


def _row(*widgets: QWidget) -> QHBoxLayout:
    row = QHBoxLayout()
    for widget in widgets:
        row.addWidget(widget)
    return row


class AuthoringForm(QWidget):
    def __init__(self, start_states: list[str]) -> None:
        super().__init__()
        self.id = QLineEdit()
        self.id.setPlaceholderText("q11_lane_walk (also the file name)")
        self.title = QLineEdit()
        self.title.setPlaceholderText("Walk to the cobbled lane")
        self.quest = QLineEdit()
        self.quest.setPlaceholderText("q11_lane")
        self.category = QComboBox()
        self.category.addItems(CATEGORIES)
        self.budget = QSpinBox()
        self.budget.setRange(1, 2000)
        self.budget.setValue(DEFAULT_BUDGET)
        self.budget.setSuffix(" steps")
        task = QFormLayout()
        for label, field in (("Id", self.id), ("Title", self.title), ("Quest", self.quest)):
            task.addRow(label, field)
        kind = _row(self.category, QLabel("budget"), self.budget)
        kind.setStretch(0, 1)
        task.addRow("Category", kind)

        self.start = QComboBox()
        self.set_start_states(start_states)
        self.start.setToolTip("A named start state of the world, or the one captured with Capture start here")
        self.capture_start = _capture_button("Capture start here", "the game as it is now becomes the task's start")
        self.go_to_start = _capture_button("Go to start", "reset the game to this start state, to author from there")
        start = QVBoxLayout()
        start.addWidget(self.start)
        start.addLayout(_row(self.capture_start, self.go_to_start))

        self.record_goal = _capture_button("Record goal here", "success: the character within the radius of here")
        self.radius = QDoubleSpinBox()
        # In the game's own units (set_units): a game that walks hundreds of units a second needs radii of tens
        self.radius.setRange(0.1, 100_000.0)
        self.radius.setSingleStep(0.5)
        self.radius.setValue(DEFAULT_RADIUS_M)
        self.radius.setPrefix("radius ")
        self.set_units("m")
        self.goal = QLabel("No goal yet.")
        self.add_waypoint = _capture_button("Add waypoint here", "the reference route walks to here next")
        self.add_interact = _capture_button("Add interact step here",
                                            "the reference route walks here, then presses A at what is in front")
        self.route = QListWidget()
        self.route.setMaximumHeight(64)
        self.remove_step = QPushButton("Remove")
        self.remove_step.setToolTip("remove the selected route step (the last one when none is selected)")
        steps = _row(self.route)
        steps.addWidget(self.remove_step, 0, Qt.AlignmentFlag.AlignTop)
        goal = QVBoxLayout()
        goal.addLayout(_row(self.record_goal, self.radius))
        goal.addWidget(self.goal)
        goal.addLayout(_row(self.add_waypoint, self.add_interact))
        goal.addLayout(steps)
        goal.setSpacing(4)

        self.flags = QListWidget()
        self.flags.setMaximumHeight(48)
        self.flags.setToolTip("tick a flag to make its new value part of the success condition")
        self.flags.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # ticked with the mouse: Space stays A while driving
        self.combine = QComboBox()
        for index, (text, (value, meaning)) in enumerate(COMBINE.items()):
            self.combine.addItem(text, value)
            self.combine.setItemData(index, meaning, Qt.ItemDataRole.ToolTipRole)
        self.combine.setToolTip("how the goal and the ticked flags combine into the success condition")
        self.compare_from_now = _capture_button("Compare from here", "list the flags that change from now on")
        flags = QVBoxLayout()
        flags.addWidget(self.flags)
        flags.addLayout(_row(QLabel("Success needs"), self.combine, self.compare_from_now))
        flags.setSpacing(4)

        self.instructions: dict[str, QPlainTextEdit] = {}
        self.instruction_tabs = QTabWidget()
        self.instruction_tabs.setDocumentMode(True)
        for granularity, (label, placeholder) in INSTRUCTIONS.items():
            edit = QPlainTextEdit()
            edit.setPlaceholderText(placeholder)
            edit.setTabChangesFocus(True)
            edit.setFixedHeight(50)
            self.instruction_tabs.addTab(edit, label)
            self.instructions[granularity] = edit
        texts = QVBoxLayout()
        texts.addWidget(self.instruction_tabs)

        self.driving_help = QLabel(DRIVING_HELP)
        self.driving_help.setWordWrap(True)
        self.driving_help.setStyleSheet("color: #445; background: #eef3fb; padding: 4px;")
        column = QVBoxLayout(self)
        column.setContentsMargins(4, 4, 4, 4)
        column.addWidget(self.driving_help)
        for title, layout in (("Task", task), ("Start state", start), ("Goal and reference route", goal),
                              ("Flags changed since the last capture", flags), ("Instructions", texts)):
            group = QGroupBox(title)
            group.setLayout(layout)
            column.addWidget(group)
        column.addStretch(1)

    def set_units(self, units: str | None) -> None:
        """The game's position units, for the radius (None: unsaid, a bare number)."""
        self.radius.setSuffix(f" {units}" if units else "")

    def set_start_states(self, names: list[str]) -> None:
        """The game's named start states, in place of the last game's (a capture is dropped with them)."""
        self.start.blockSignals(True)  # the panel picks the first itself; no "chosen" echo of the clear
        self.start.clear()
        for name in names:
            self.start.addItem(name, name)
        self.start.blockSignals(False)


class AuthoringBar(QWidget):
    """Save, Save as…, Try it with its busy indicator, the outcome of the last try, and a message line
    for what the user must know (validation errors with file and line, refusals, game errors)."""

    def __init__(self) -> None:
        super().__init__()
        self.save_button = QPushButton("Save")
        self.save_as_button = QPushButton("Save as…")
        self.save_as_button.setToolTip("validate the task and write <id>.yaml in a folder you choose")
        self.replace = QCheckBox("replace an existing file")
        self.try_button = QPushButton("Try it")
        self.try_button.setToolTip("reset to the start, then drive the reference route under the evaluator")
        self.progress = QProgressBar()
        self.progress.setRange(0, 0)  # the task's budget once a try starts; the value counts its steps
        self.progress.setFormat("%v of %m steps")
        self.progress.setMaximumHeight(16)
        keep_place = self.progress.sizePolicy()
        keep_place.setRetainSizeWhenHidden(True)  # the Try it button keeps its size when the bar hides
        self.progress.setSizePolicy(keep_place)
        self.progress.hide()
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("stop the try after its current step; the game goes back to where it was")
        self.cancel_button.hide()
        self.try_result = QLabel("")
        self.try_result.setToolTip("Trying steers the character by ground truth, as `tasks validate --drive` does:\n"
                                   "it proves the task solvable, and is never an agent's result.")
        self.message = QLabel("")
        for label in (self.try_result, self.message):
            label.setWordWrap(True)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        column = QVBoxLayout(self)
        column.setContentsMargins(4, 0, 4, 0)
        save = _row(self.save_button, self.save_as_button, self.replace)
        save.addStretch(1)
        trying = _row(self.try_button)
        trying.addWidget(self.progress, 1)
        trying.addWidget(self.cancel_button)
        for part in (save, trying):
            column.addLayout(part)
        column.addWidget(self.try_result)
        column.addWidget(self.message)
