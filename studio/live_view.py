"""The Live view: game frames, the agent's reasoning, the trajectory and the metrics of a running
episode, with controls, human takeover and interventions. Slots turn UI events into one call on the
LiveSession; everything heavy runs in the session's threads."""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtCore import QByteArray, QSettings, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QInputDialog, QLabel, QMainWindow, QMessageBox, QVBoxLayout, QWidget

from core.backends.profile import BackendProfile
from core.game.pad import PadState
from core.session.runner import goal_point
from studio.authoring_panel import AuthoringPanel
from studio.human_control import HUMAN_STEP_S, KEY_PADS, GamepadPoller, describe_pad
from studio.live_controls import LiveControls
from studio.live_session import LiveSession
from studio.live_timeline import LiveTimeline
from studio.recording_bar import RecordingBar
from studio.task_list import TaskList
from widgets.frame_view import FrameView
from widgets.metrics_bar import MetricsBar
from widgets.observation_strip import ObservationStrip
from widgets.reasoning_panel import ReasoningPanel
from widgets.trajectory_plot import TrajectoryPlot

FRAME_POLL_MS = 15    # faster than the game's 30 fps, so no produced frame falls between two polls
SAMPLE_POLL_MS = 100
SOURCE_POLL_MS = 1000
ACTIONS = (  # name, shortcut, what it does (for Help > Keyboard shortcuts)
    ("Start", "Ctrl+R", "start an episode with the chosen settings"),
    ("Pause", "Ctrl+P", "pause the agent after the current step"),
    ("Resume", "Ctrl+Shift+P", "resume the agent"),
    ("Step", "Ctrl+N", "let the agent take exactly one step"),
    ("Stop", "Ctrl+.", "end the episode (the recording is closed cleanly)"),
    ("Push back", "Ctrl+B", "physical intervention: walk the character back"),
    ("Turn around", "Ctrl+T", "physical intervention: turn the camera 180°"),
    ("Send hint…", "Ctrl+H", "text intervention: free text in the agent's next prompt"),
    ("Take control", "Ctrl+K", "pause the agent and drive yourself (again to hand back)"),
    ("Restart world", "Ctrl+Shift+R", "start a fresh built-in world"),
    ("Back to live", "Esc", "after looking at an earlier step, show the game again"),
)


class LiveView(QMainWindow):
    sig_open_in_replay = Signal(str)  # an episode file the user wants to review

    def __init__(self, session: LiveSession) -> None:
        super().__init__()
        self.session = session
        self.frame_view = FrameView()
        self.observations = ObservationStrip()
        self.recording = RecordingBar()
        self.history = LiveTimeline()
        central = QWidget()
        column = QVBoxLayout(central)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.frame_view, 1)
        column.addWidget(self.observations)
        column.addWidget(self.recording)
        column.addWidget(self.history)
        self.setCentralWidget(central)
        self.controls = LiveControls([t.id for t in session.tasks])
        self.reasoning = ReasoningPanel()
        self.trajectory = TrajectoryPlot()
        self.metrics = MetricsBar()
        self._dock("Episode", self.controls, Qt.DockWidgetArea.LeftDockWidgetArea)
        self._dock("Reasoning", self.reasoning, Qt.DockWidgetArea.RightDockWidgetArea)
        self._dock("Trajectory", self.trajectory, Qt.DockWidgetArea.RightDockWidgetArea)
        self.tasks = TaskList(session.tasks)
        self._dock("Tasks", self.tasks, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.authoring = AuthoringPanel(session, self.trajectory)
        self._dock("Author task", self.authoring, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.authoring.sig_task_added.connect(self.controls.add_task)
        self.authoring.sig_task_added.connect(lambda _id: self.tasks.set_tasks(session.tasks))
        episode_dock = self.findChild(QDockWidget, "dock-Episode")
        self.tabifyDockWidget(episode_dock, self.findChild(QDockWidget, "dock-Author task"))
        self.tabifyDockWidget(episode_dock, self.findChild(QDockWidget, "dock-Tasks"))
        episode_dock.raise_()
        self.resizeDocks([episode_dock, self.findChild(QDockWidget, "dock-Trajectory")], [360, 430],
                         Qt.Orientation.Horizontal)
        self.actions_by_name = self._build_toolbar()
        self.status = QLabel(f"Starting {session.backend.title}…")
        self.statusBar().addWidget(self.status, 1)
        self.source = QLabel()  # the game, its capture rate and the input device
        self.source.setObjectName("source-status")
        self.statusBar().addPermanentWidget(self.source)
        self.statusBar().addPermanentWidget(self.metrics)
        self.gamepad = GamepadPoller(session.human_input, lambda: session.human_inputs_waiting)
        self.gamepad.sig_status.connect(self.status.setText)
        self._last_frame_no = -1
        self._viewing_step: int | None = None  # an earlier step shown instead of the live game
        self._step_info = ""
        self._evaluator_state = ""
        self.frame_timer = QTimer(self)
        self.frame_timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.frame_timer.timeout.connect(self._pull_frame)
        self.frame_timer.start(FRAME_POLL_MS)
        self.plot_timer = QTimer(self)
        self.plot_timer.timeout.connect(self._pull_samples)
        self.plot_timer.start(SAMPLE_POLL_MS)
        self.source_timer = QTimer(self)
        self.source_timer.timeout.connect(self._pull_source)
        self.source_timer.start(SOURCE_POLL_MS)
        for signal, slot in ((session.sig_ready, self._on_ready), (session.sig_error, self._on_error),
                             (session.sig_thinking, self.reasoning.set_thinking),
                             (session.sig_observation, self.observations.show_images),
                             (session.sig_step, self._on_step), (session.sig_metrics, self._on_metrics),
                             (session.sig_episode_started, self._on_episode_started),
                             (session.sig_episode_end, self._on_episode_end)):
            signal.connect(slot)
        self.recording.sig_open_in_replay.connect(self.sig_open_in_replay)
        self.reasoning.sig_step_selected.connect(self.history.select_step)
        self.history.sig_view_step.connect(self._view_step)
        session.sig_observation.connect(self.history.add_observation)
        self.tasks.sig_task_chosen.connect(self.controls.task.setCurrentText)
        self.controls.task.currentTextChanged.connect(self.show_task)
        self.controls.sig_clock_changed.connect(self._clock_changed)

    def _dock(self, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> None:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock-{title}")
        dock.setWidget(widget)
        self.addDockWidget(area, dock)

    def _build_toolbar(self) -> dict[str, QAction]:
        bar = self.addToolBar("Controls")
        bar.setObjectName("controls")
        slots = {"Start": self.start, "Pause": self.session.pause, "Resume": self.session.resume,
                 "Step": self.session.step_once, "Stop": self.session.stop, "Push back": self.push_back,
                 "Turn around": self.turn_around, "Send hint…": self.send_hint, "Take control": self.toggle_control,
                 "Restart world": self.restart_world, "Back to live": self.history.back_to_live}
        actions = {}
        for name, shortcut, tip in ACTIONS:
            action = QAction(name, self)
            action.setShortcut(QKeySequence(shortcut))
            action.setToolTip(f"{tip} ({shortcut})")
            action.triggered.connect(slots[name])
            bar.addAction(action)
            actions[name] = action
            if name in ("Stop", "Send hint…"):
                bar.addSeparator()
        overlays = QAction("Overlays", self)
        overlays.setCheckable(True)
        overlays.setChecked(True)
        overlays.toggled.connect(self.frame_view.set_overlays_visible)
        bar.addAction(overlays)
        actions["Overlays"] = overlays
        return actions

    # -- commands ---------------------------------------------------------------------------------
    @Slot()
    def start(self) -> None:
        self.session.start_episode(self.controls.choices())

    @Slot()
    def push_back(self) -> None:
        self.session.intervene("push_back")

    @Slot()
    def turn_around(self) -> None:
        self.session.intervene("turn_around")

    @Slot()
    def send_hint(self) -> None:
        text, ok = QInputDialog.getText(self, "Send hint", "Text for the agent's next prompt:")
        if ok and text.strip():
            self.session.intervene("text", text.strip())

    @Slot()
    def restart_world(self) -> None:
        self.status.setText(f"Restarting {self.session.backend.title}…")
        self._last_frame_no = -1
        self.session.restart_world(self.controls.clock_mode)

    def switch_backend(self, backend: BackendProfile) -> None:
        """Drive another game: its tasks in the form and the list, its frames in the view."""
        if self.session.busy:
            self.status.setText("An episode is running: stop it before choosing another game.")
            return
        self.status.setText(f"Starting {backend.title}…")
        self._last_frame_no = -1
        self.session.switch_backend(backend)
        self.trajectory.clear_episode()
        self.trajectory.set_backdrop([])
        self.controls.clock.setEnabled(self.session.is_builtin)  # external games run in real time only
        self.controls.set_tasks([t.id for t in self.session.tasks])
        self.tasks.set_tasks(self.session.tasks)

    @Slot()
    def _pull_source(self) -> None:
        self.source.setText(self.session.status_line())

    @Slot(str)
    def _clock_changed(self, mode: str) -> None:
        if self.session.world is None:
            self.session.mode = mode  # applies when the world starts
        elif mode != self.session.mode:
            self.status.setText(f"Restarting the world in {mode} mode…")
            self._last_frame_no = -1
            self.session.restart_world(mode)

    @Slot()
    def toggle_control(self) -> None:
        if self.actions_by_name["Take control"].text() == "Hand back":
            self.session.hand_back()
            self.gamepad.stop()
            self.actions_by_name["Take control"].setText("Take control")
            self.status.setText("Control handed back to the agent.")
            return
        self.session.take_over()
        self.actions_by_name["Take control"].setText("Hand back")
        self.status.setText("You have control: WASD moves, arrows turn the camera, Space/E is A, Q is B.")
        self.gamepad.start()
        self.frame_view.setFocus()

    @property
    def human_driving(self) -> bool:
        return self.actions_by_name["Take control"].text() == "Hand back"

    def keyPressEvent(self, event: Any) -> None:
        pad: PadState | None = KEY_PADS.get(event.key()) if self.human_driving else None
        if pad is None:
            super().keyPressEvent(event)
            return
        self.session.human_input(pad, HUMAN_STEP_S)

    @Slot(str)
    def show_task(self, task_id: str) -> None:
        """The selected task's goal and reference route on the trajectory plot."""
        if not task_id or not any(t.id == task_id for t in self.session.tasks):
            return
        task = self.session.task(task_id)
        goal = goal_point(task)
        radius = getattr(getattr(task.success, "reach", None), "radius", 3.0)
        route = [step.goto if hasattr(step, "goto") else step.interact.target  # type: ignore[union-attr]
                 for step in task.reference_route]
        if goal is not None:
            self.trajectory.set_goal(goal[0], goal[1], radius)
        self.trajectory.set_route(route)
        if not self.session.outline and (route or goal is not None):
            # No map of this game to frame the plot on: frame the task's route and goal instead.
            self.trajectory.frame_on(np.array(route + ([goal] if goal is not None else []), float), margin=12.0)

    # -- pulled on timers ---------------------------------------------------------------------------
    @Slot(int, object)
    def _view_step(self, step: int, image: np.ndarray | None) -> None:
        if step < 0:
            self._viewing_step, self._last_frame_no = None, -1  # the next poll shows the live game again
            return
        self._viewing_step = step
        if image is not None:
            self.frame_view.show_frame(image)
            self.status.setText(f"Showing step {step} as the agent saw it (half size). Esc returns to live.")
        else:
            self.status.setText(f"Step {step}'s frame is no longer kept here; open the recording in Replay.")

    @Slot()
    def _pull_frame(self) -> None:
        if self._viewing_step is not None:
            self.frame_view.set_overlay("top_right", f"step {self._viewing_step} (as seen by the agent)")
            return
        latest = self.session.latest_frame()
        if latest is not None and latest[0] != self._last_frame_no:
            self._last_frame_no = latest[0]
            self.frame_view.show_frame(latest[1])
        self.frame_view.set_overlay("top_left", describe_pad(self.session.pad_held))
        self.frame_view.set_overlay("top_right", self._step_info)

    @Slot()
    def _pull_samples(self) -> None:
        state = self.session.evaluator_state()
        if state.get("state") != self._evaluator_state:
            self._evaluator_state = str(state.get("state"))
            if self._evaluator_state in ("failed", "disconnected"):
                self.status.setText(f"Evaluator stopped: {state.get('message') or 'no reason given'}. Ground truth "
                                    "is unavailable; Restart world (Ctrl+Shift+R) starts a fresh pair.")
            elif self._evaluator_state in ("lost", "scanning") and self.session.world is not None:
                self.status.setText(f"Evaluator: {state.get('message') or 'searching for the state block'} "
                                    "(it rescans by itself)")
            elif self._evaluator_state == "locked" and "Evaluator:" in self.status.text():
                self.status.setText("Evaluator: state block found again.")
        samples = self.session.new_samples()
        if not samples:
            return
        self.trajectory.append_path(np.fromiter((s.x for s in samples), float, len(samples)),
                                    np.fromiter((s.y for s in samples), float, len(samples)))
        last = samples[-1]
        self.trajectory.set_position(last.x, last.y, last.facing)

    # -- session signals ----------------------------------------------------------------------------
    @Slot(str)
    def _on_ready(self, description: str) -> None:
        self.status.setText(f"Connected: {description}. Press Start.")
        self.trajectory.set_backdrop(self.session.outline)
        self.show_task(self.controls.task.currentText())

    @Slot(str)
    def _on_error(self, message: str) -> None:
        died = "world process" in message
        hint = " Use Restart world (Ctrl+Shift+R) to start a new one." if died else ""
        self.status.setText(f"Error: {message.splitlines()[0]}{hint}")
        if self.isVisible() and not self.window().property("quiet"):
            if died and QMessageBox.question(self, "PokeGym Studio", f"{message}\n\nRestart the world?") \
                    == QMessageBox.StandardButton.Yes:
                self.restart_world()
            elif not died:
                QMessageBox.warning(self, "PokeGym Studio", message)

    @Slot(dict)
    def _on_step(self, record: dict[str, Any]) -> None:
        self.reasoning.add_step(record)
        self.history.add_step(record)
        self.metrics.add_usage(record.get("usage") or {}, float(record.get("latency_s", 0.0)))
        if record.get("position") is not None:
            step = int(record["step"])
            self.trajectory.add_step(step, *record["position"])
            if record.get("source") == "human":
                self.trajectory.add_mark(step, "human")
            if record.get("intervention"):
                self.trajectory.add_mark(step, str(record["intervention"]["kind"]))

    @Slot(dict)
    def _on_metrics(self, metrics: dict[str, Any]) -> None:
        deadlocks = metrics.get("deadlocks") or []
        consecutive = metrics.get("current_consecutive_im", 0)
        self.metrics.update_metrics({**metrics, "consecutive": consecutive})
        steps = [(int(span["start"]), int(span["end"])) for span in deadlocks]  # step numbers, from 1
        self.trajectory.set_deadlocks(steps)
        self.history.set_deadlocks([(start - 1, end - 1) for start, end in steps])
        if metrics.get("success"):
            self.history.mark_success(int(metrics.get("step", 0)))
        self._step_info = f"step {metrics.get('step', 0)} / {self.metrics.budget}"

    @Slot(dict)
    def _on_episode_started(self, info: dict[str, Any]) -> None:
        self.reasoning.clear()
        self.history.reset()
        self._view_step(-1, None)
        self.trajectory.clear_episode()
        self.metrics.reset(int(info["budget"]))
        self.show_task(info["task_id"])
        self._step_info = f"step 0 / {info['budget']}"
        first = self.session.latest_sample()
        if first is not None:
            self.trajectory.set_start(first.x, first.y)
        self.recording.set_recording(info["recording"], finished=False)
        self.status.setText(f"Running {info['task_id']}.")
        if self.human_driving:
            self.session.take_over()  # control was taken before Start: the human keeps it

    @Slot(dict)
    def _on_episode_end(self, result: dict[str, Any]) -> None:
        self.recording.set_recording(result["recording"], finished=True)
        if self.human_driving:
            self.toggle_control()
        if result.get("error"):
            died = "world process" in result["error"]
            hint = " Use Restart world (Ctrl+Shift+R) to start a new one." if died else ""
            self.status.setText(f"Episode stopped by an error after {result.get('steps_used')} steps (recording "
                                f"kept): {result['error'].splitlines()[0]}{hint}")
            return
        verdict = "succeeded" if result.get("success") else f"ended ({result.get('end_reason')})"
        self.status.setText(f"Episode {verdict} after {result.get('steps_used')} steps; "
                            f"suggested category: {result.get('failure_category_suggestion')}")

    # -- settings and shutdown ------------------------------------------------------------------------
    def save_settings(self, settings: QSettings) -> None:
        self.controls.save(settings)
        settings.setValue("live/state", self.saveState())

    def restore_settings(self, settings: QSettings) -> None:
        self.controls.restore(settings)
        state = settings.value("live/state")
        if isinstance(state, QByteArray):
            self.restoreState(state)
        self.session.mode = self.controls.clock_mode

    def shut_down(self) -> None:
        self.frame_timer.stop()
        self.plot_timer.stop()
        self.source_timer.stop()
        self.gamepad.stop()
        self.session.close()
