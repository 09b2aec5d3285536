"""The Live view: game frames, the agent's reasoning, the trajectory and the metrics of a running
episode, with controls, human takeover and interventions. Slots turn UI events into one call on the
LiveSession; everything heavy runs in the session's threads. The world starts the first time the view
is shown, so a studio opened on a recording (`python main.py replay FILE`) starts none."""

from __future__ import annotations

import logging
from typing import Any, Literal

import numpy as np
from PySide6.QtCore import QByteArray, QEvent, QSettings, Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QDockWidget,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QVBoxLayout,
    QWidget,
)

from core.backends.profile import BackendProfile
from core.session.interventions import InterventionProgress
from studio import live_map
from studio.audio_feeder import AudioFeeder, audio_output_problem
from studio.authoring_panel import AuthoringPanel
from studio.dock_layout import share_on_small_screens
from studio.episode_cursor import EpisodeCursor
from studio.episode_messages import EpisodeEnd, EpisodeStart, describe_end, describe_intervention
from studio.episode_panes import EpisodePanes
from studio.human_control import HumanDriver, describe_pad, is_driving_key
from studio.instruction_bar import InstructionBar
from studio.live_audio import LiveRingSource
from studio.live_controls import GRANULARITIES, LiveControls
from studio.live_session import LiveSession
from studio.live_timeline import KEEP_STEPS, LiveTimeline
from studio.live_toolbar import build_toolbar
from studio.recording_bar import RecordingBar
from studio.sound_settings import restore_sound, save_sound
from studio.status_messages import StatusLine, describe_error, describe_evaluator
from studio.task_list import TaskList
from widgets.elided_label import ElidedLabel
from widgets.frame_view import FrameView
from widgets.metrics_bar import MetricsBar
from widgets.observation_strip import ObservationStrip
from widgets.reasoning_panel import ReasoningPanel
from widgets.sound_pane import SoundPane
from widgets.trajectory_plot import TrajectoryPlot

log = logging.getLogger("studio.live")
FRAME_POLL_MS = 15    # faster than the game's 30 fps, so no produced frame falls between two polls
SAMPLE_POLL_MS = 100
SOURCE_POLL_MS = 1000
SOUND_POLL_MS = 40    # the sound pane's new columns and levels (made on the feeder thread)
Control = Literal["agent", "human"]


class LiveView(QMainWindow):
    sig_open_in_replay = Signal(str)  # an episode file the user wants to review

    def __init__(self, session: LiveSession) -> None:
        super().__init__()
        self.session = session
        self.host = host = session.host
        self.frame_view = FrameView()
        self.frame_view.setFocusPolicy(Qt.FocusPolicy.ClickFocus)  # click the game, then drive with the keys
        self.instruction = InstructionBar()
        self.observations = ObservationStrip()
        self.recording = RecordingBar()
        self.timeline = LiveTimeline()
        central = QWidget()
        column = QVBoxLayout(central)
        column.setContentsMargins(0, 0, 0, 0)
        for widget, stretch in ((self.instruction, 0), (self.frame_view, 1), (self.observations, 0),
                                (self.recording, 0), (self.timeline, 0)):
            column.addWidget(widget, stretch)
        self.setCentralWidget(central)
        self.controls = LiveControls([t.id for t in host.tasks])
        self.controls.show_game_clock(host.is_builtin)  # `--backend minetest`: real time from the start
        self.reasoning = ReasoningPanel()
        self.trajectory = TrajectoryPlot()
        self.metrics = MetricsBar()
        self.tasks = TaskList(host.tasks)
        self.authoring = AuthoringPanel(host, self.trajectory)
        # The game's sound: played and drawn from its audio ring by a feeder thread (studio/audio_feeder.py).
        self.sound = SoundPane()
        output_problem = audio_output_problem()
        self.speaker = AudioFeeder("live", with_output=output_problem is None)
        self.sound_source = LiveRingSource(host)
        self._sound_problem_said: str | None = None
        # The episode's panes: the runner's episode at a cursor that follows the newest step until a step is picked.
        self.step_cursor = EpisodeCursor(follows_newest=True)
        self.panes = EpisodePanes(self.step_cursor, self.timeline.timeline, self.trajectory, self.metrics,
                                  self.frame_view, self.observations, reasoning=self.reasoning, keep_frames=KEEP_STEPS)
        self._build_docks()
        self.actions_by_name = build_toolbar(self, {
            "Start": self.start, "Pause": self.pause, "Resume": self.resume, "Step": self.step_once,
            "Stop": session.stop, "Push back": self.push_back, "Turn around": self.turn_around,
            "Send hint…": self.send_hint, "Take control": self.toggle_control, "Restart world": self.restart_world,
            "Back to live": self.step_cursor.follow})
        self.actions_by_name["Overlays"].toggled.connect(self.frame_view.set_overlays_visible)
        self.status = ElidedLabel(mode=Qt.TextElideMode.ElideRight)  # a message's start says what happened
        self.state_label = QLabel("")
        self.state_label.setStyleSheet("font-weight: bold; padding: 0 6px")
        self.statusBar().addWidget(self.state_label)
        # The message and the game's line share the room the metrics leave, 2 to 1, each shortened to fit with
        # the whole text in its tooltip: at its natural width the game's line left an episode's outcome cut off.
        self.statusBar().addWidget(self.status, 2)
        self.source = ElidedLabel()  # the game, its capture rate and the input device
        self.source.setObjectName("source-status")
        self.statusBar().addPermanentWidget(self.source, 1)
        self.sound_status = QLabel("")  # "no audio output", said once and kept
        self.sound_status.setStyleSheet("color: #8a5a00; padding: 0 4px")
        self.sound_status.hide()
        self.statusBar().addPermanentWidget(self.sound_status)
        self.statusBar().addPermanentWidget(self.metrics)
        self.driver = HumanDriver(session.human_input, lambda: session.human_inputs_waiting,
                                  session.cancel_human_inputs)
        self.driver.sig_status.connect(self.say)
        self._last_frame_no = -1
        self.control: Control = "agent"  # who drives the episode's character
        self._step_info = ""
        self._evaluator_state = ""
        self._status_about_evaluator = False  # the status line is about the evaluator (a recovery may follow it)
        self._awaiting_reset = False  # an episode started: the path begins after its reset
        self._running_task = ""
        self.frame_timer = QTimer(self)
        self.frame_timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.frame_timer.timeout.connect(self._pull_frame)
        self.frame_timer.start(FRAME_POLL_MS)
        self.plot_timer = QTimer(self)
        self.plot_timer.timeout.connect(self._pull_samples)
        self.plot_timer.start(SAMPLE_POLL_MS)
        self.frames_hidden_reason: str | None = None  # why the frames were last not the game's, once said
        self.source_timer = QTimer(self)
        self.source_timer.timeout.connect(self._pull_source)
        self.source_timer.start(SOURCE_POLL_MS)
        self.sound_timer = QTimer(self)
        self.sound_timer.timeout.connect(self._pull_sound)
        self._connect_signals()
        self._show_planned()

    def _build_docks(self) -> None:
        episode_dock = self._dock("Episode", self.controls, Qt.DockWidgetArea.LeftDockWidgetArea)
        self._dock("Reasoning", self.reasoning, Qt.DockWidgetArea.RightDockWidgetArea)
        trajectory_dock = self._dock("Trajectory", self.trajectory, Qt.DockWidgetArea.RightDockWidgetArea)
        sound_dock = self._dock("Sound", self.sound, Qt.DockWidgetArea.RightDockWidgetArea)
        tasks_dock = self._dock("Tasks", self.tasks, Qt.DockWidgetArea.LeftDockWidgetArea)
        authoring_dock = self._dock("Author task", self.authoring, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.tabifyDockWidget(episode_dock, authoring_dock)
        self.tabifyDockWidget(episode_dock, tasks_dock)
        episode_dock.raise_()
        share_on_small_screens(self, trajectory_dock, sound_dock)
        self.resizeDocks([episode_dock, trajectory_dock], [360, 430], Qt.Orientation.Horizontal)

    def _connect_signals(self) -> None:
        session, host = self.session, self.host
        for signal, slot in ((host.sig_ready, self._on_ready), (host.sig_problem, self._on_error),
                             (session.sig_problem, self._on_error),
                             (session.sig_status, self.say), (session.sig_thinking, self.reasoning.set_thinking),
                             (session.sig_observation, self._on_observation),
                             (session.sig_reset, self._on_reset), (session.sig_intervention, self._on_intervention),
                             (session.sig_episode_started, self._on_episode_started),
                             (session.sig_episode_end, self._on_episode_end)):
            signal.connect(slot)
        self.recording.sig_open_in_replay.connect(self.sig_open_in_replay)
        self.reasoning.sig_step_selected.connect(self.select_step)
        self.timeline.timeline.sig_seek.connect(self.step_cursor.move_to)
        self.timeline.back.clicked.connect(self.step_cursor.follow)
        self.step_cursor.sig_following.connect(self.timeline.set_following)
        self.step_cursor.sig_moved.connect(self._cursor_moved)
        self.tasks.sig_task_chosen.connect(self.controls.task.setCurrentText)
        self.authoring.sig_task_added.connect(self.controls.add_task)
        self.authoring.sig_task_added.connect(self._task_added)
        self.controls.task.currentTextChanged.connect(self.show_task)
        self.controls.granularity.currentTextChanged.connect(self._show_planned)
        self.controls.budget.valueChanged.connect(self._show_planned)
        self.controls.sig_clock_changed.connect(self._clock_changed)
        self.controls.sig_pace_changed.connect(session.set_pace)
        self.sound.sig_muted.connect(self.speaker.set_muted)
        self.sound.sig_volume.connect(self.speaker.set_volume)

    def _dock(self, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock-{title}")
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        if self.host.world is None and self.host.keeper.state == "idle":
            self.say("Starting the built-in world…")
        self.host.connect()  # the first time the view is shown (a no-op once running or starting)
        self.speaker.start()
        self.speaker.set_source(self.sound_source)  # heard while the view is shown
        self.sound_timer.start(SOUND_POLL_MS)

    def hideEvent(self, event: Any) -> None:
        self.driver.release_all()  # key-up events will not reach a hidden view
        self.speaker.set_source(None)
        self.sound_timer.stop()
        super().hideEvent(event)

    # -- commands ---------------------------------------------------------------------------------
    @Slot(str)
    def say(self, text: str, error: bool = False) -> None:
        """One line in the status bar (red for errors). Nothing here opens a dialog."""
        self.status.set_full_text(text)
        self.status.setStyleSheet("color: #b00020" if error else "")
        self._status_about_evaluator = False

    def _say_line(self, line: StatusLine) -> None:
        self.say(line.text, error=line.error)
        self._status_about_evaluator = line.about_evaluator

    @Slot()
    def start(self) -> None:
        self.session.start_episode(self.controls.choices())

    @Slot()
    def pause(self) -> None:
        if self.session.busy:
            self.say("Pausing after the step in progress; Resume (Ctrl+Shift+P) goes on, Step runs one step.")
        self.session.pause()

    @Slot()
    def resume(self) -> None:
        if self.session.busy:
            self.say(f"Running {self._running_task} again.")
        self.session.resume()

    @Slot()
    def step_once(self) -> None:
        if self.session.busy:
            self.say("One step, then paused again.")
        self.session.step_once()

    @Slot()
    def push_back(self) -> None:
        self.session.intervene("push_back")

    @Slot()
    def turn_around(self) -> None:
        self.session.intervene("turn_around")

    @Slot()
    def send_hint(self) -> None:
        if not self.session.busy:
            self.say("No episode is running: start one before sending a hint.")
            return
        text, ok = QInputDialog.getText(self, "Send hint", "Text for the agent's next prompt:")
        if ok and text.strip():
            self.session.intervene("text", text.strip())

    @Slot()
    def restart_world(self) -> None:
        self.say(f"Restarting {self.host.backend.title}…")
        self._forget_world()
        self.session.restart_world(self.controls.clock_mode)

    def _forget_world(self) -> None:
        """What belonged to the old world goes: its frame, its trail and the step overlay."""
        self._last_frame_no = -1
        self._step_info = ""
        self._awaiting_reset = False
        self.trajectory.clear_episode()
        self.frame_view.set_overlay("top_right", "")

    def switch_backend(self, backend: BackendProfile) -> None:
        """Drive another game: its tasks in the form and the list, its frames in the view."""
        if self.session.busy:
            self.say("An episode is running: stop it before choosing another game.")
            return
        self.say(f"Starting {backend.title}…")
        self._forget_world()
        self.session.restart_world(backend=backend)
        self.authoring.use_backend(backend)
        self.trajectory.set_backdrop([])
        self.controls.show_game_clock(self.host.is_builtin)  # external games run in real time only
        self.controls.set_tasks([t.id for t in self.host.tasks])
        self.tasks.set_tasks(self.host.tasks)

    @Slot()
    def _pull_source(self) -> None:
        self.source.set_full_text(self.host.status_line())
        self._check_frames_are_the_game()

    def _check_frames_are_the_game(self) -> None:
        """A game on the user's display can be covered (the studio raised over it) or minimized: its frames
        are then not the game, and the agent must not act on them. Checked once a second, like the source."""
        check = getattr(self.host.world, "frames_not_the_game", None)
        reason = check() if check is not None else None
        if reason is None:
            self.frames_hidden_reason = None
            return
        if reason == self.frames_hidden_reason:
            return  # said once
        self.frames_hidden_reason = reason
        runner = self.session.runner
        running = self.session.busy and runner is not None and not runner.paused
        if running:
            self.session.pause()
        self.say(f"Frames are not the game: {reason}." + (" The agent is paused;" if running else "")
                 + " Uncover the game's window" + (", then Resume." if running else "."), error=True)

    @Slot(str)
    def _clock_changed(self, mode: str) -> None:
        if self.host.world is None:
            self.host.mode = mode  # applies when the world starts
        elif mode != self.host.mode:
            self.say(f"Restarting the world in {mode} mode…")
            self._forget_world()
            self.session.restart_world(mode)

    @Slot()
    def toggle_control(self) -> None:
        if self.human_driving:
            self.session.hand_back()
            self.driver.close_gamepad()
            self._set_control("agent")
            runner = self.session.runner
            self.say("Control handed back; the agent stays paused, as it was before you took over: Resume to go on."
                     if runner is not None and self.session.busy and runner.paused else
                     "Control handed back to the agent.")
            return
        self.session.take_over()
        self._set_control("human")
        self.say("You have control: hold W A S D to move, the arrows turn the camera, Space/E is A, Q is B.")
        self.driver.open_gamepad()
        self.frame_view.setFocus()

    def _set_control(self, control: Control) -> None:
        self.control = control
        self.actions_by_name["Take control"].setText("Hand back" if control == "human" else "Take control")

    @property
    def human_driving(self) -> bool:
        return self.control == "human"

    def keyPressEvent(self, event: Any) -> None:
        if self.session.can_drive and self.driver.key_down(event.key(), event.isAutoRepeat(), event.modifiers(),
                                                           event.timestamp()):
            event.accept()
            return
        if self.session.busy and is_driving_key(event):
            self.say("The agent is driving: Take control (Ctrl+K) to drive yourself.")
        super().keyPressEvent(event)

    def keyReleaseEvent(self, event: Any) -> None:
        if self.driver.key_up(event.key(), event.isAutoRepeat(), event.timestamp()):
            event.accept()
            return
        super().keyReleaseEvent(event)

    def changeEvent(self, event: Any) -> None:
        if event.type() == QEvent.Type.ActivationChange and not self.isActiveWindow():
            self.driver.release_all()  # another window has the keyboard: the key-up of a held key goes there
        super().changeEvent(event)

    @Slot(str)
    def show_task(self, task_id: str) -> None:
        """The selected task's start, goal and reference route on the map, and its instruction."""
        try:
            task = self.host.task(task_id)
        except StopIteration:
            return
        # A game that gives no map outline: frame the plot on the task's own route and goal instead.
        live_map.show_task(self.trajectory, task, frame_on_task=not self.host.outline)
        self._show_planned()

    @Slot(str)
    def _task_added(self, _task_id: str) -> None:
        self.tasks.set_tasks(self.host.tasks)

    @Slot()
    def _show_planned(self) -> None:
        """Before Start: the budget and the instruction the chosen task will run with."""
        if self.session.busy:
            return
        try:
            task = self.host.task(self.controls.task.currentText())
        except StopIteration:
            return
        self.metrics.show_budget(self.controls.budget.value() or task.step_budget)
        self.instruction.show_task(task, GRANULARITIES[self.controls.granularity.currentText()], running=False)

    # -- the cursor (the panes follow it; this says where it is) -----------------------------------
    @Slot(int)
    def select_step(self, step: int) -> None:
        """Show an earlier step (a click in the reasoning list): the cursor stops following the newest."""
        if self.panes.episode is not None and len(self.panes.episode):
            self.step_cursor.move_to(self.panes.episode.index_of(step))

    @Slot(int)
    def _cursor_moved(self, index: int) -> None:
        if self.step_cursor.following:
            self._last_frame_no = -1  # the next poll shows the live game again
            self._step_info = f"step {self.panes.current_step} / {self.metrics.budget}"
            return
        step = self.panes.current_step
        if self.panes.has_kept_frame(index):
            self.say(f"Showing step {step} as the agent saw it (half size). Esc returns to live.")
        else:
            self.say(f"Step {step}'s frame is no longer kept here; open the recording in Replay.")

    @Slot(int, dict)
    def _on_observation(self, step: int, images: dict[str, Any]) -> None:
        """What the agent is given now; while an earlier step is on screen, that step's view stays."""
        if self.step_cursor.following:
            self.observations.show_images(step, images)

    # -- pulled on timers ---------------------------------------------------------------------------
    @Slot()
    def _pull_frame(self) -> None:
        if not self.step_cursor.following:
            self.frame_view.set_overlay("top_right", f"step {self.panes.current_step} (as seen by the agent)")
            return
        latest = self.host.latest_frame()
        if latest is not None and latest[0] != self._last_frame_no:
            self._last_frame_no = latest[0]
            self.frame_view.show_frame(latest[1])
        self.frame_view.set_overlay("top_left", describe_pad(self.host.pad_held))
        self.frame_view.set_overlay("top_right", self._step_info)

    @Slot()
    def _pull_samples(self) -> None:
        self.state_label.setText(self.session.state_text())
        state = self.host.evaluator_state()
        line = describe_evaluator(self._evaluator_state, state, self.host.world is not None,
                                  self._status_about_evaluator)
        self._evaluator_state = str(state.get("state"))
        if line is not None:
            self._say_line(line)
        self._take_samples()

    def _take_samples(self) -> None:
        """The samples come since the last look: onto the trail, and the marker where the last one is."""
        samples = self.host.new_samples()
        if not samples:
            return
        if not self._awaiting_reset:  # before the episode's reset, the samples are of the old place
            self.trajectory.append_path(np.fromiter((s.x for s in samples), float, len(samples)),
                                        np.fromiter((s.y for s in samples), float, len(samples)))
        last = samples[-1]
        self.trajectory.set_position(last.x, last.y, last.facing)

    @Slot()
    def _pull_sound(self) -> None:
        """The spectrogram columns and levels the feeder made since the last pull, and its problem, said once."""
        columns = self.speaker.take_columns()
        if columns is not None:
            self.sound.push_columns(columns)
        self.sound.set_levels(self.speaker.levels)
        problem = self.speaker.problem
        if problem is not None and problem != self._sound_problem_said:
            self._sound_problem_said = problem
            self.sound_status.setText(problem)
            self.sound_status.setToolTip(f"{problem}: the game's sound is drawn in the Sound pane, not played")
            self.sound_status.show()
            self.sound.set_caption(f"{problem}: drawn, not played")
            log.info("sound: %s", problem)
        elif problem is None and self.host.heard_game() is None and self.host.world is not None:
            self.sound.set_caption(f"{self.host.backend.title} gives no sound")
        elif problem is None:
            self.sound.set_caption("")

    # -- session signals ----------------------------------------------------------------------------
    @Slot(str)
    def _on_ready(self, description: str) -> None:
        log.info("connected: %s", description)
        self.say(f"Connected: {description}. Press Start (Ctrl+R); meanwhile W A S D drive the character.")
        self.trajectory.set_backdrop(self.host.outline)
        self.trajectory.set_units(self.host.position_units)
        self.show_task(self.controls.task.currentText())

    @Slot(str, str)
    def _on_error(self, message: str, kind: str) -> None:
        died = kind == "world_died"
        self._say_line(describe_error(message, kind))
        # Only a dead world asks something (whether to restart it); every other message stays in the bar.
        if died and self.isVisible() and not self.window().property("quiet") and QMessageBox.question(
                self, "PokeGym Studio", f"{message}\n\nRestart the world?") == QMessageBox.StandardButton.Yes:
            self.restart_world()

    @Slot(float, float, int)
    def _on_reset(self, x: float, y: float, cursor: int) -> None:
        """The episode's reset is done: the trail starts here, from this sample on."""
        self._awaiting_reset = False
        self.trajectory.clear_path()
        self.host.samples_from(cursor)
        self.trajectory.append_path(np.array([x]), np.array([y]))

    @Slot(object)
    def _on_intervention(self, progress: InterventionProgress) -> None:
        text = describe_intervention(progress)
        if text:
            self.say(text, error=progress.status == "undelivered")

    @Slot(object)
    def _on_episode_started(self, info: EpisodeStart) -> None:
        self.trajectory.clear_episode()
        self._awaiting_reset = True
        runner = self.session.runner
        # Emitted before the runner's thread starts: subscribing here misses no step.
        self.panes.set_episode(runner.episode if runner is not None else None, info.budget)
        task = self.host.task(info.task_id)
        live_map.show_task(self.trajectory, task)
        self.instruction.show_task(task, info.granularity, running=True)  # what this episode's agent reads
        self._step_info = f"step 0 / {info.budget}"
        self.recording.set_recording(str(info.recording), finished=False)
        self._running_task = info.task_id
        self.say(f"Running {info.task_id} (seed {info.seed}).")
        if self.human_driving:
            self.session.take_over()  # control was taken before Start: the human keeps it

    @Slot(object)
    def _on_episode_end(self, end: EpisodeEnd) -> None:
        self.recording.set_recording(str(end.recording), finished=True)
        # The game goes on between episodes: the overlay no longer counts steps, and the episode's trail stays
        # (dotted) with its marks and spans until the next Start, while driving on draws a trail of its own.
        self._step_info = ""
        self.frame_view.set_overlay("top_right", "")
        # The episode's last samples may not have been looked at yet (the map looks a few times a second): they
        # belong to its trail, not to the one drawn after it (a loaded CI machine drew two points there).
        self._take_samples()
        self.trajectory.end_episode_path()
        if self.human_driving:
            self.toggle_control()
        # Also when the episode never set a result; an error is one whatever end reason came with it.
        result = end.result
        self.metrics.set_outcome(bool(result.success), "error" if result.error else result.end_reason)
        self.instruction.running = False
        text, error = describe_end(end)
        self.say(text, error=error)

    # -- settings and shutdown ------------------------------------------------------------------------
    def save_settings(self, settings: QSettings) -> None:
        self.controls.save(settings)
        settings.setValue("live/state", self.saveState())
        save_sound(settings, "live", self.sound)

    def restore_settings(self, settings: QSettings) -> None:
        self.controls.restore(settings)
        restore_sound(settings, "live", self.sound)
        state = settings.value("live/state")
        if isinstance(state, QByteArray):
            self.restoreState(state)
        self.host.mode = self.controls.clock_mode
        self._show_planned()

    def shut_down(self) -> None:
        self.frame_timer.stop()
        self.plot_timer.stop()
        self.source_timer.stop()
        self.sound_timer.stop()
        self.speaker.close()
        self.panes.close()
        self.driver.stop()
        self.session.close()
