"""AuthoringPanel: write a task while driving the live game, save it and try it.

The TaskDraft (core/authoring) is the model: every button is one call on it, with the evaluator's
sample as ground truth, and the panel redraws when the draft announces a change. Captures, going
to a start state and trying are drives of the studio's GameHost (studio/authoring_worker.py), so
they queue behind the key presses already sent and never block the window.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import QFileDialog, QListWidgetItem, QScrollArea, QVBoxLayout, QWidget

from core.authoring import TaskDraft, TryResult, save_task
from core.authoring.context import world_start_states
from core.backends.profile import BackendProfile
from core.episode.units import with_units
from core.evaluation.sample import StateSample
from core.evaluation.tasks import InlineStart, Task, TaskFileError
from core.paths import user_tasks_dir
from studio import authoring_fields as fields
from studio import authoring_views as views
from studio.authoring_form import CAPTURED, AuthoringBar, AuthoringForm
from studio.authoring_worker import AuthoringWorker
from studio.game_host import GameHost
from widgets.trajectory_plot import TrajectoryPlot

FLAG_POLL_MS = 300
DRAFT_CHANGES = ("start", "goal", "waypoint", "interact", "at_start")
SAYS = {"start": "Start captured", "goal": "Goal recorded", "waypoint": "Waypoint added",
        "interact": "Interact step added", "baseline": "Flag changes are now listed from here",
        "at_start": "At the start state; flag changes are listed from here"}  # "ready": said by the status bar


class AuthoringPanel(QWidget):
    sig_task_saved = Signal(str)   # path of the task file just written
    sig_task_added = Signal(str)   # id of that task, now in the host's tasks (for LiveControls.add_task)
    sig_tried = Signal(object)     # the TryResult of "Try it"

    def __init__(self, host: GameHost, trajectory: TrajectoryPlot | None = None,
                 tasks_dir: Path | None = None) -> None:
        super().__init__()
        self.host = host
        self.trajectory = trajectory
        self.start_poses = _start_poses(host.backend)
        self.draft = TaskDraft(list(host.flags), list(self.start_poses))
        self.form = AuthoringForm(list(self.start_poses))
        self.bar = AuthoringBar()
        self.worker = AuthoringWorker(host)
        self.tasks_dir = Path(tasks_dir) if tasks_dir is not None else user_tasks_dir()
        self._trying = False
        self._flag_rows: list[views.FlagRow] = []
        self._captured_start: InlineStart | None = None
        self._tried: Task | None = None
        self._layout()
        self._connect()
        self.flag_timer = QTimer(self)
        self.flag_timer.timeout.connect(self._refresh_flags)
        if self.form.start.count():
            self.draft.use_named_start(self.form.start.currentData())

    def use_backend(self, backend: BackendProfile) -> None:
        """Another game is driven: its start states and flags in the form (Minetest offered "plaza")."""
        self.start_poses = _start_poses(backend)
        self.draft.flag_names = list(self.host.flags)
        self.draft.start_states = list(self.start_poses)
        self.form.set_start_states(list(self.start_poses))
        self._captured_start = None
        if self.form.start.count():
            self.draft.use_named_start(self.form.start.currentData())
        else:
            self.draft.start_state = None

    @property
    def tasks_dir(self) -> Path:
        """Where Save writes (assets/tasks by default); Save as… asks for a folder."""
        return self._tasks_dir

    @tasks_dir.setter
    def tasks_dir(self, folder: Path) -> None:
        self._tasks_dir = Path(folder)
        self.bar.save_button.setToolTip(f"validate the task and write <id>.yaml in {self._tasks_dir}")

    def _layout(self) -> None:
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(self.form)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 4)
        column.addWidget(scroll, 1)
        column.addWidget(self.bar)

    def _connect(self) -> None:
        form, draft = self.form, self.draft
        form.id.textChanged.connect(lambda text: draft.update(id=text))
        form.title.textChanged.connect(lambda text: draft.update(title=text))
        form.quest.textChanged.connect(lambda text: draft.update(quest=text))
        form.category.currentTextChanged.connect(lambda text: draft.update(category=text))
        form.budget.valueChanged.connect(lambda value: draft.update(step_budget=value))
        form.combine.currentIndexChanged.connect(lambda _: draft.update(combine=form.combine.currentData()))
        for granularity, edit in form.instructions.items():
            edit.textChanged.connect(lambda g=granularity, e=edit: draft.set_instructions(**{g: e.toPlainText()}))
        form.start.currentIndexChanged.connect(self._start_chosen)
        form.radius.valueChanged.connect(self._radius_changed)
        for button, purpose in ((form.capture_start, "start"), (form.record_goal, "goal"),
                                (form.add_waypoint, "waypoint"), (form.add_interact, "interact"),
                                (form.compare_from_now, "baseline")):
            button.clicked.connect(lambda _=False, p=purpose: self.capture(p))
        form.go_to_start.clicked.connect(self.go_to_start)
        form.remove_step.clicked.connect(self.remove_route_step)
        form.flags.itemChanged.connect(self._flag_ticked)
        self.bar.save_button.clicked.connect(self._save_clicked)
        self.bar.save_as_button.clicked.connect(self.save_as)
        self.bar.try_button.clicked.connect(self.try_it)
        self.bar.cancel_button.clicked.connect(self.worker.cancel_try)
        self.worker.sig_try_step.connect(self._try_step)
        self.worker.sig_try_cancelled.connect(self._on_try_cancelled)
        self.worker.sig_sampled.connect(self._on_sampled)
        self.worker.sig_tried.connect(self._on_tried)
        self.worker.sig_failed.connect(self._on_failed)
        self.host.sig_ready.connect(self._on_ready)
        draft.sig_changed.connect(self._render)

    # -- commands -------------------------------------------------------------------------------
    def capture(self, purpose: str) -> None:
        """"start", "goal", "waypoint", "interact" or "baseline": the game as it is once the keys already
        pressed have been played (during an episode, its newest sample)."""
        if self.host.episode_running:
            sample = self.host.latest_sample()
            if sample is None:
                self._say("The evaluator has no reading yet.", "error")
            else:
                self._on_sampled(purpose, sample)
            return
        try:
            self.worker.sample(purpose)
        except RuntimeError as exc:
            self._say(str(exc), "error")

    @Slot()
    def go_to_start(self) -> None:
        """Reset the game to the draft's start state and list flag changes from there."""
        start = self.draft.start_state
        if start is None:
            self._say("Choose or capture a start state first.", "error")
            return
        try:
            self.worker.go_to(start.to_reset() if isinstance(start, InlineStart) else start)
        except RuntimeError as exc:
            self._say(str(exc), "error")

    @Slot()
    def remove_route_step(self) -> None:
        """Remove the selected step of the reference route, or the last one when none is selected."""
        row, count = self.form.route.currentRow(), len(self.draft.route)
        if count:
            self.draft.remove_route_step(row if 0 <= row < count else count - 1)
            self._preview()

    def save(self, folder: Path | None = None, overwrite: bool | None = None) -> Path | None:
        """Validate and write the task; problems are marked on the form's fields, never raised. Warns when
        the reference route ends away from the goal (a try would stop short of it)."""
        try:
            path = save_task(self.draft, Path(folder) if folder is not None else self.tasks_dir,
                             overwrite=self.bar.replace.isChecked() if overwrite is None else overwrite)
            task = self.draft.validate(path)
        except TaskFileError as exc:
            self._refused(exc)
            return None
        fields.clear_marks(self.form)
        self.host.add_task(task)
        gap = self.draft.route_gap()
        if gap is not None and self.draft.goal is not None:
            units = self.host.position_units
            self._say(f"Saved {path}, but the reference route ends {with_units(round(gap, 1), units)} from the "
                      f"goal (radius {with_units(self.draft.goal.radius, units)}): Try it will stop short. "
                      "Record the goal again where the route should end, or add a waypoint at the goal.", "error")
        else:
            self._say(f"Saved {path}.", "ok")
        self.sig_task_saved.emit(str(path))
        self.sig_task_added.emit(task.id)
        return path

    @Slot()
    def save_as(self) -> None:
        """A save-file dialog named after the task's id. The id follows the file name chosen (a task's id
        is its file name), and the dialog has already asked before replacing a file."""
        start = self.tasks_dir / f"{self.draft.id or 'untitled'}.yaml"
        chosen, _ = QFileDialog.getSaveFileName(self, "Save the task as", str(start), "Task files (*.yaml)")
        if not chosen:
            return
        path = Path(chosen) if chosen.endswith(".yaml") else Path(f"{chosen}.yaml")
        if path.stem != self.draft.id:
            self.form.id.setText(path.stem)  # the draft follows the field
        self.save(path.parent, overwrite=path.exists())

    def _refused(self, error: TaskFileError) -> None:
        marked = fields.mark_problems(self.form, error)
        self._say(marked or str(error), "error")

    @Slot()
    def try_it(self) -> None:
        """Check that the start loads and the reference route reaches success, off the GUI thread."""
        if self._trying:
            self._say("Already trying: wait for the result.", "error")
            return
        if self.host.episode_running:
            self._say("An episode is running: stop it before trying the task (trying drives the character).",
                      "error")
            return
        try:
            task = self.draft.validate()
            self.worker.try_out(task)
        except TaskFileError as exc:
            self._refused(exc)
            return
        except RuntimeError as exc:
            self._say(str(exc), "error")
            return
        fields.clear_marks(self.form)
        self._tried = task
        self.bar.progress.setRange(0, max(task.step_budget, task.reference_steps or 0))
        self.bar.progress.setValue(0)
        self._set_trying(True)
        if self.trajectory is not None:
            self.trajectory.clear_episode()  # the plot's path becomes the try's drive
        views.show_message(self.bar.try_result, f"Trying {task.id}… the scripted driver follows the reference route.",
                           "info")
        self._preview(task)

    def flags_listed(self) -> dict[str, bool]:
        """What the flags list shows: flag name -> ticked as a success condition."""
        return {name: ticked for name, _, ticked in self._flag_rows}

    # -- results from the worker (GUI thread) ----------------------------------------------------------
    @Slot(str, object)
    def _on_sampled(self, purpose: str, sample: StateSample) -> None:
        try:
            self._apply(purpose, sample)
        except ValueError as exc:  # e.g. a start inside a dialogue: the draft says why
            self._say(str(exc), "error")
            return
        if purpose in SAYS:
            self._say(f"{SAYS[purpose]}: ({sample.x:.1f}, {sample.y:.1f}).", "info")
        if purpose in DRAFT_CHANGES:  # the map shows the chosen task until the draft itself changes
            self._preview()

    @Slot(object)
    def _on_tried(self, result: TryResult) -> None:
        self._set_trying(False)
        budget = self._tried.step_budget if self._tried is not None else self.draft.step_budget
        views.show_message(self.bar.try_result, views.describe_try(result, budget), "ok" if result.success else "error")
        self.sig_tried.emit(result)

    @Slot(int)
    def _try_step(self, steps: int) -> None:
        if steps > self.bar.progress.maximum():  # past the budget: the try says so when it ends
            self.bar.progress.setMaximum(steps)
        self.bar.progress.setValue(steps)

    @Slot()
    def _on_try_cancelled(self) -> None:
        self._set_trying(False)
        views.show_message(self.bar.try_result, "Try cancelled; the game is back where it was.", "info")

    @Slot(str, str)
    def _on_failed(self, purpose: str, message: str) -> None:
        if purpose == "try" and self._trying:
            self._set_trying(False)
            views.show_message(self.bar.try_result, "Not tried: the game failed (see below).", "error")
        self._say(message, "error")

    @Slot(str)
    def _on_ready(self, _description: str) -> None:
        self.form.set_units(self.host.position_units)
        # Flag changes are listed from the moment the world is up. Nothing has been pressed yet, so the
        # evaluator's newest reading will do: a job queued on the drive thread here would make a Start
        # pressed the moment "Connected" shows refuse with "the world is still busy".
        sample = self.host.latest_sample()
        if sample is not None:
            self._on_sampled("ready", sample)
        else:
            self.capture("ready")

    # -- field slots ---------------------------------------------------------------------------------
    @Slot(int)
    def _start_chosen(self, index: int) -> None:
        if self.form.start.itemData(index) == CAPTURED:
            self.draft.start_state = self._captured_start  # the earlier capture, picked again
            self._render()
        else:
            self.draft.use_named_start(self.form.start.itemData(index))
        self._preview()

    @Slot(float)
    def _radius_changed(self, radius: float) -> None:
        if self.draft.goal is not None:
            self.draft.set_goal_radius(radius)
            self._preview()

    @Slot(QListWidgetItem)
    def _flag_ticked(self, item: QListWidgetItem) -> None:
        name, equals = item.data(Qt.ItemDataRole.UserRole)
        if item.checkState() == Qt.CheckState.Checked:
            self.draft.add_flag_condition(name, equals)
        else:
            self.draft.remove_flag_condition(name)

    @Slot()
    def _save_clicked(self) -> None:
        self.save()

    # -- the draft, shown -------------------------------------------------------------------------------
    def _apply(self, purpose: str, sample: StateSample) -> None:
        if purpose == "start":
            self._captured_start = self.draft.capture_start(sample)
            views.show_captured_start(self.form.start, self._captured_start)
        elif purpose == "goal":
            self.draft.record_goal(sample, radius=self.form.radius.value())
        elif purpose == "waypoint":
            self.draft.add_waypoint(sample)
        elif purpose == "interact":
            self.draft.add_interact(sample)
        else:  # "baseline", "at_start", "ready"
            self.draft.set_baseline(sample)

    @Slot()
    def _render(self) -> None:
        self.form.goal.setText(views.describe_goal(self.draft.goal, self.host.position_units))
        views.show_route(self.form.route, self.draft.route)
        # From the event loop: ticking a flag changes the draft, and the list must not be rebuilt inside
        # the signal of the item being ticked.
        QTimer.singleShot(0, self, self._refresh_flags)

    @Slot()
    def _refresh_flags(self) -> None:
        rows = views.flag_rows(self.draft, self.host.latest_sample())
        if rows != self._flag_rows:
            self._flag_rows = rows
            views.show_flag_rows(self.form.flags, rows)

    def _preview(self, task: Task | None = None) -> None:
        """The draft's (or a tried task's) start, goal and route on the trajectory plot."""
        if self.trajectory is None:
            return
        start = task.start_state if task is not None else self.draft.start_state
        pos = start.pos if isinstance(start, InlineStart) else self.start_poses.get(start or "", {}).get("pos")
        goal = getattr(task.success, "reach", None) if task is not None else self.draft.goal
        views.show_on_plot(self.trajectory, pos, goal, task.reference_route if task is not None else self.draft.route)

    def _set_trying(self, trying: bool) -> None:
        self._trying = trying
        self.bar.try_button.setEnabled(not trying)
        self.bar.progress.setVisible(trying)
        self.bar.cancel_button.setVisible(trying)

    def _say(self, text: str, kind: str) -> None:
        views.show_message(self.bar.message, text, kind)

    # -- flags are polled only while the panel is on screen -----------------------------------------------
    def showEvent(self, event: Any) -> None:
        self.flag_timer.start(FLAG_POLL_MS)
        super().showEvent(event)

    def hideEvent(self, event: Any) -> None:
        self.flag_timer.stop()
        super().hideEvent(event)


def _start_poses(backend: BackendProfile) -> dict[str, dict[str, Any]]:
    """The game's named start states; the built-in world's file records where each stands."""
    names = backend.start_states
    if names is None:
        return world_start_states()[1]
    return {name: {} for name in names}  # an external game's: a command or a macro, no recorded pose
