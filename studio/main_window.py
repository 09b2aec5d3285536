"""The studio's main window: the Live view of the built-in world."""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtCore import QSettings, Qt, QTimer, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QDockWidget,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QToolBar,
    QWidget,
)

from core.evaluation.sample import StateSample
from core.game.pad import Button, PadState
from core.session.runner import goal_point
from studio.live_session import LiveSession
from widgets.frame_view import FrameView
from widgets.metrics_bar import MetricsBar
from widgets.reasoning_panel import ReasoningPanel
from widgets.trajectory_plot import TrajectoryPlot

SETTINGS_VERSION = 1
HUMAN_STEP_S = 0.25
KEY_PADS = {
    Qt.Key.Key_W: PadState(left_y=1.0), Qt.Key.Key_S: PadState(left_y=-1.0),
    Qt.Key.Key_A: PadState(left_x=-1.0), Qt.Key.Key_D: PadState(left_x=1.0),
    Qt.Key.Key_Left: PadState(right_x=-1.0), Qt.Key.Key_Right: PadState(right_x=1.0),
    Qt.Key.Key_Up: PadState(right_y=1.0), Qt.Key.Key_Down: PadState(right_y=-1.0),
    Qt.Key.Key_Space: PadState(buttons=frozenset({Button.A})), Qt.Key.Key_E: PadState(buttons=frozenset({Button.A})),
    Qt.Key.Key_Q: PadState(buttons=frozenset({Button.B})),
}
GRANULARITIES = {"Visual-guided": "visual_guided", "Step-guided": "step_guided", "Goal-only": "goal_only"}


class MainWindow(QMainWindow):
    def __init__(self, session: LiveSession) -> None:
        super().__init__()
        self.session = session
        self.setWindowTitle("PokeGym Studio — Live")
        self.resize(1400, 860)
        self.frame_view = FrameView()
        self.setCentralWidget(self.frame_view)
        self.reasoning = ReasoningPanel()
        self.trajectory = TrajectoryPlot()
        self.metrics = MetricsBar()
        self._dock("Reasoning", self.reasoning, Qt.DockWidgetArea.RightDockWidgetArea)
        self._dock("Trajectory", self.trajectory, Qt.DockWidgetArea.RightDockWidgetArea)
        self._build_toolbar()
        help_menu = self.menuBar().addMenu("&Help")
        shortcuts = QAction("Keyboard shortcuts", self)
        shortcuts.triggered.connect(self.show_shortcuts)
        help_menu.addAction(shortcuts)
        self.statusBar().addPermanentWidget(self.metrics, 1)
        self.status = QLabel("Starting the built-in world…")
        self.statusBar().addWidget(self.status)
        self._xs: list[float] = []
        self._ys: list[float] = []
        self._last_frame_no = -1
        self.frame_timer = QTimer(self)
        self.frame_timer.timeout.connect(self._pull_frame)
        self.frame_timer.start(33)
        self.plot_timer = QTimer(self)
        self.plot_timer.timeout.connect(self._pull_samples)
        self.plot_timer.start(100)
        session.sig_ready.connect(self._on_ready)
        session.sig_error.connect(self._on_error)
        session.sig_thinking.connect(self._on_thinking)
        session.sig_step.connect(self._on_step)
        session.sig_metrics.connect(self._on_metrics)
        session.sig_episode_started.connect(self._on_episode_started)
        session.sig_episode_end.connect(self._on_episode_end)
        self._restore_settings()

    # -- layout -------------------------------------------------------------------------------
    def _dock(self, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> None:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock-{title}")
        dock.setWidget(widget)
        self.addDockWidget(area, dock)

    def _build_toolbar(self) -> None:
        bar = QToolBar("Controls", self)
        bar.setObjectName("controls")
        self.addToolBar(bar)
        self.task_box = QComboBox()
        self.task_box.addItems([t.id for t in self.session.tasks])
        self.granularity_box = QComboBox()
        self.granularity_box.addItems(list(GRANULARITIES))
        self.agent_box = QComboBox()
        self.agent_box.addItems(["random", "model:claude-sonnet-4.6", "model:gpt-5.2", "model:gemini-3-pro"])
        self.intervention_box = QComboBox()
        self.intervention_box.addItems(["none", "text", "physical"])
        for label, box in (("Task", self.task_box), ("Instructions", self.granularity_box),
                           ("Agent", self.agent_box), ("Auto intervention", self.intervention_box)):
            bar.addWidget(QLabel(f" {label}: "))
            bar.addWidget(box)
        bar.addSeparator()
        self.actions_by_name: dict[str, QAction] = {}
        for name, shortcut, slot in (("Start", "Ctrl+R", self.start), ("Pause", "Ctrl+P", self.session.pause),
                                     ("Resume", "Ctrl+Shift+P", self.session.resume),
                                     ("Step", "Ctrl+N", self.session.step_once), ("Stop", "Ctrl+.", self.session.stop),
                                     ("Push back", "Ctrl+B", lambda: self.session.intervene("push_back")),
                                     ("Turn around", "Ctrl+T", lambda: self.session.intervene("turn_around")),
                                     ("Send hint…", "Ctrl+H", self.send_hint),
                                     ("Take control", "Ctrl+K", self.toggle_control),
                                     ("Restart world", "Ctrl+Shift+R", self.restart_world)):
            action = QAction(name, self)
            action.setShortcut(QKeySequence(shortcut))
            action.triggered.connect(slot)
            bar.addAction(action)
            self.actions_by_name[name] = action

    # -- commands (slots turn UI events into one call) -------------------------------------------
    @Slot()
    def start(self) -> None:
        granularity = GRANULARITIES[self.granularity_box.currentText()]
        self.session.start_episode(self.task_box.currentText(), granularity, self.agent_box.currentText(),
                                   self.intervention_box.currentText())

    @Slot()
    def restart_world(self) -> None:
        self.status.setText("Restarting the built-in world…")
        self._last_frame_no = -1
        self.session.restart_world()

    @Slot()
    def toggle_control(self) -> None:
        if self.session.taken_over:
            self.session.hand_back()
            self.actions_by_name["Take control"].setText("Take control")
            self.status.setText("Control handed back to the agent.")
        else:
            self.session.take_over()
            self.actions_by_name["Take control"].setText("Hand back")
            self.status.setText("You have control: WASD moves, arrows turn the camera, Space/E is A, Q is B.")
        self.frame_view.setFocus()

    def keyPressEvent(self, event: Any) -> None:
        pad = KEY_PADS.get(event.key()) if self.session.taken_over else None
        if pad is None:
            super().keyPressEvent(event)
            return
        self.session.human_input(pad, HUMAN_STEP_S)

    @Slot()
    def show_shortcuts(self) -> None:
        rows = [f"{action.shortcut().toString()}\t{name}" for name, action in self.actions_by_name.items()]
        rows += ["", "While you have control:", "W A S D\tmove", "Arrow keys\tturn and tilt the camera",
                 "Space or E\tA (interact)", "Q\tB (cancel)"]
        QMessageBox.information(self, "Keyboard shortcuts", "\n".join(rows))

    @Slot()
    def send_hint(self) -> None:
        text, ok = QInputDialog.getText(self, "Send hint", "Text for the agent's next prompt:")
        if ok and text.strip():
            self.session.intervene("text", text.strip())

    # -- pulled on timers -------------------------------------------------------------------------
    @Slot()
    def _pull_frame(self) -> None:
        latest = self.session.latest_frame()
        if latest is not None and latest[0] != self._last_frame_no:
            self._last_frame_no = latest[0]
            self.frame_view.show_frame(latest[1])

    @Slot()
    def _pull_samples(self) -> None:
        samples: list[StateSample] = self.session.new_samples()
        if not samples:
            return
        self._xs.extend(s.x for s in samples)
        self._ys.extend(s.y for s in samples)
        self.trajectory.set_path(np.asarray(self._xs), np.asarray(self._ys))
        last = samples[-1]
        self.trajectory.set_position(last.x, last.y, last.facing)

    # -- session signals ----------------------------------------------------------------------------
    @Slot(str)
    def _on_ready(self, description: str) -> None:
        self.status.setText(f"Connected: {description}. Press Start.")

    @Slot(str)
    def _on_error(self, message: str) -> None:
        died = "world process" in message
        hint = " Use Restart world (Ctrl+Shift+R) to start a new one." if died else ""
        self.status.setText(f"Error: {message.splitlines()[0]}{hint}")
        if self.isVisible() and not self.property("quiet"):
            if died and QMessageBox.question(self, "PokeGym Studio", f"{message}\n\nRestart the world?") \
                    == QMessageBox.StandardButton.Yes:
                self.restart_world()
            elif not died:
                QMessageBox.warning(self, "PokeGym Studio", message)

    @Slot(bool)
    def _on_thinking(self, active: bool) -> None:
        self.reasoning.set_thinking(active)

    @Slot(dict)
    def _on_step(self, record: dict[str, Any]) -> None:
        self.reasoning.add_step(record)
        self.metrics.add_usage(record.get("usage") or {}, float(record.get("latency_s", 0.0)))

    @Slot(dict)
    def _on_metrics(self, metrics: dict[str, Any]) -> None:
        deadlocks = metrics.get("deadlocks") or []
        consecutive = metrics.get("max_consecutive_im", 0)
        last_open = deadlocks and not deadlocks[-1][2]
        self.metrics.update_metrics({**metrics, "consecutive": consecutive if last_open else 0})

    @Slot(dict)
    def _on_episode_started(self, info: dict[str, Any]) -> None:
        self.reasoning.clear()
        self.trajectory.clear_episode()
        self._xs.clear()
        self._ys.clear()
        self.metrics.reset(int(info["budget"]))
        task = next(t for t in self.session.tasks if t.id == info["task_id"])
        goal = goal_point(task)
        if goal is not None:
            radius = getattr(getattr(task.success, "reach", None), "radius", 3.0)
            self.trajectory.set_goal(goal[0], goal[1], radius)
        self.status.setText(f"Running {task.id}; recording to {info['recording']}")

    @Slot(dict)
    def _on_episode_end(self, result: dict[str, Any]) -> None:
        if result.get("error"):
            died = "world process" in result["error"]
            hint = " Use Restart world (Ctrl+Shift+R) to start a new one." if died else ""
            self.status.setText(f"Episode stopped by an error after {result.get('steps_used')} steps (recording "
                                f"kept): {result['error'].splitlines()[0]}{hint}")
            return
        verdict = "succeeded" if result.get("success") else f"ended ({result.get('end_reason')})"
        self.status.setText(f"Episode {verdict} after {result.get('steps_used')} steps; "
                            f"suggested category: {result.get('failure_category_suggestion')}")

    # -- settings ----------------------------------------------------------------------------------
    def _restore_settings(self) -> None:
        settings = QSettings("PokeGym", "Studio")
        if int(settings.value("version", 0)) != SETTINGS_VERSION:
            return
        for key, box in (("task", self.task_box), ("granularity", self.granularity_box), ("agent", self.agent_box),
                         ("intervention", self.intervention_box)):
            value = settings.value(key)
            if isinstance(value, str) and box.findText(value) >= 0:
                box.setCurrentText(value)
        geometry, state = settings.value("geometry"), settings.value("state")
        if geometry is not None:
            self.restoreGeometry(geometry)
        if state is not None:
            self.restoreState(state)

    def closeEvent(self, event: Any) -> None:
        settings = QSettings("PokeGym", "Studio")
        settings.setValue("version", SETTINGS_VERSION)
        for key, box in (("task", self.task_box), ("granularity", self.granularity_box), ("agent", self.agent_box),
                         ("intervention", self.intervention_box)):
            settings.setValue(key, box.currentText())
        settings.setValue("geometry", self.saveGeometry())
        settings.setValue("state", self.saveState())
        self.frame_timer.stop()
        self.plot_timer.stop()
        self.session.close()
        super().closeEvent(event)
