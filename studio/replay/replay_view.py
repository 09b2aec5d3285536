"""The Replay view: a recorded episode, frame-exact by step, with synchronised panes, playback and
deadlock labelling. Episodes open in a worker thread; images come from a latest-wins loader."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QByteArray, QSettings, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QComboBox,
    QDockWidget,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QPushButton,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from core.episode import Episode
from studio.dock_layout import share_on_small_screens
from studio.episode_cursor import EpisodeCursor
from studio.episode_panes import EpisodePanes
from studio.replay.episode_list import EpisodeList
from studio.replay.export_clip_dialog import ExportClipDialog
from studio.replay.frame_loader import FrameLoader, StepImages, damage_note
from studio.replay.keymap import REPLAY_KEYS, TextFieldsKeepKeys, load_keys
from studio.replay.open_check import load_for_view
from studio.replay.playback import PlaybackPlan
from studio.replay.replay_labelling import ReplayLabelling
from studio.replay.replay_sound import ReplaySound
from studio.sound_marks import bump_positions
from studio.sound_settings import restore_sound, save_sound
from widgets.elided_label import ElidedLabel
from widgets.frame_view import FrameView
from widgets.metrics_bar import MetricsBar
from widgets.observation_strip import ObservationStrip
from widgets.step_details import StepDetails
from widgets.timeline import Timeline
from widgets.trajectory_plot import TrajectoryPlot

log = logging.getLogger("studio.replay")
SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
PLAY_TICK_MS = 15
MAP_AFTER_MS = 1  # the map of a newly opened episode is drawn in a later turn of the event loop
PANES_FALLBACK_MS = 60  # if the image is slow (or unreadable), update the other panes anyway


class ReplayView(QMainWindow):
    sig_opened = Signal(str)        # path, once an episode is on screen
    sig_open_failed = Signal(str)   # what went wrong, for the status bar
    sig_image_shown = Signal(int)   # step index whose images are now displayed
    sig_image_damaged = Signal(int, str)  # step index shown with a damaged image, what is damaged
    # (request, (episode, labels, thinned path, why labels cannot be saved or "") or None, path, error)
    _sig_loaded = Signal(int, object, str, str)

    def __init__(self) -> None:
        super().__init__()
        self.episode: Episode | None = None
        self.loader: FrameLoader | None = None
        self.step_cursor = EpisodeCursor()  # moved by the user and by playback
        self.shown_index = -1
        self.frame_view = FrameView()
        self.observations = ObservationStrip()
        self.sub_frames = QSlider(Qt.Orientation.Horizontal)
        self.sub_frames_label = QLabel("")
        self.play_button = QPushButton("Play")
        self.speed = QComboBox()
        self.speed.addItems([f"{s:g}×" for s in SPEEDS])
        self.speed.setCurrentText("1×")
        self.position_label = QLabel("")
        self.export_button = QPushButton("Export clip…")
        self.export_button.setToolTip("Write the selected steps (Shift+drag on the timeline) as an MP4 or GIF with "
                                      "overlays (Ctrl+Shift+E)")
        self.clip_dialog: ExportClipDialog | None = None
        self.message = QLabel("Open an episode: File → Open recording…, drop an .h5 file here, or "
                              "`python main.py replay PATH`.")
        self.message.setWordWrap(True)
        self._damage_said = False  # the status bar shows a damaged step's note
        self.timeline = Timeline()
        self.labelling = ReplayLabelling(self)
        self.labels, self.label_panel = self.labelling.session, self.labelling.panel
        self.labels_banner = self.labelling.banner
        self.setCentralWidget(self._central())
        self.details = StepDetails()
        self.trajectory = TrajectoryPlot()
        self.metrics = MetricsBar()
        self.hearing = ReplaySound()
        self.sound, self.speaker = self.hearing.pane, self.hearing.speaker
        self.episodes = EpisodeList()
        # The same pane set as Live's, over a loaded episode; the frame is painted before the slower panes.
        self.panes = EpisodePanes(self.step_cursor, self.timeline, self.trajectory, self.metrics, self.frame_view,
                                  self.observations, details=self.details, details_follow_cursor=False)
        docks = []
        for title, widget, area in (("Episodes", self.episodes, Qt.DockWidgetArea.LeftDockWidgetArea),
                                    ("Step", self.details, Qt.DockWidgetArea.RightDockWidgetArea),
                                    ("Trajectory", self.trajectory, Qt.DockWidgetArea.RightDockWidgetArea),
                                    ("Sound", self.sound, Qt.DockWidgetArea.RightDockWidgetArea),
                                    ("Labels", self.label_panel, Qt.DockWidgetArea.LeftDockWidgetArea)):
            dock = QDockWidget(title, self)
            dock.setObjectName(f"replay-dock-{title}")
            dock.setWidget(widget)
            self.addDockWidget(area, dock)
            docks.append(dock)
        share_on_small_screens(self, docks[2], docks[3])  # Trajectory in front, Sound behind it
        self.resizeDocks([docks[0], docks[1]], [330, 400], Qt.Orientation.Horizontal)
        # Messages in a label of their own, shortened with an ellipsis to the room the metrics leave (a
        # status bar's own message is cut off silently) and whole in the tooltip.
        self.status_message = ElidedLabel(mode=Qt.TextElideMode.ElideRight)
        self.statusBar().addWidget(self.status_message, 1)
        self.statusBar().addPermanentWidget(self.metrics)
        self.sound_status = QLabel(self.speaker.problem or "")  # "no audio output", said once and kept
        self.sound_status.setStyleSheet("color: #8a5a00; padding: 0 4px")
        self.sound_status.setVisible(self.speaker.problem is not None)
        self.statusBar().addPermanentWidget(self.sound_status)
        self.key_actions: dict[str, QAction] = {}
        self._install_keys(load_keys(QSettings("PokeGym", "Studio")))
        self.play_timer = QTimer(self)
        self.play_timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.play_timer.timeout.connect(self._play_tick)
        self._play_origin: tuple[float, int] = (0.0, 0)
        self._plan: PlaybackPlan | None = None
        self.frames_displayed = 0
        self._open_request = 0
        self._old_loaders: list[FrameLoader] = []  # closed, perhaps still finishing a read
        self._map_path = np.zeros((0, 2))
        self._ticking = False
        self._panes_due = False
        self.panes_timer = QTimer(self)
        self.panes_timer.setSingleShot(True)
        self.panes_timer.timeout.connect(self._update_panes)
        self._connect()

    def _central(self) -> QWidget:
        central = QWidget()
        column = QVBoxLayout(central)
        column.setContentsMargins(2, 2, 2, 2)
        column.addWidget(self.message)
        column.addWidget(self.labels_banner)
        column.addWidget(self.frame_view, 1)
        column.addWidget(self.observations)
        sub = QHBoxLayout()
        sub.addWidget(self.sub_frames_label)
        sub.addWidget(self.sub_frames, 1)
        column.addLayout(sub)
        transport = QHBoxLayout()
        transport.addWidget(self.play_button)
        transport.addWidget(QLabel("Speed"))
        transport.addWidget(self.speed)
        transport.addWidget(self.position_label, 1)
        transport.addWidget(self.export_button)
        column.addLayout(transport)
        column.addWidget(self.timeline)
        self.sub_frames.hide()
        self.sub_frames_label.hide()
        return central

    def _connect(self) -> None:
        self._sig_loaded.connect(self._on_loaded)
        self.timeline.sig_seek.connect(self.seek)
        self.trajectory.sig_step_clicked.connect(self.seek_step)
        self.play_button.clicked.connect(self.toggle_play)
        self.export_button.clicked.connect(self.open_export_clip)
        export = QAction("Export clip…", self)
        export.setShortcut("Ctrl+Shift+E")
        export.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        export.triggered.connect(self.open_export_clip)
        self.addAction(export)
        self.speed.currentIndexChanged.connect(self._restart_clock)
        self.sub_frames.valueChanged.connect(self._sub_frame_chosen)
        self.episodes.sig_open.connect(self.open_episode)
        self.episodes.sig_status.connect(self.say)
        self.labels.sig_error.connect(self.say)
        self.labels.sig_saved_file.connect(self.episodes.mark_labelled)  # also saves finishing after a switch
        keep_keys = TextFieldsKeepKeys(self)
        for widget in (self.label_panel.note, self.label_panel.annotator, self.episodes.filter, self.episodes.table):
            widget.installEventFilter(keep_keys)

    def _install_keys(self, keys: dict[str, Any]) -> None:
        handlers = {
            "step_back": lambda: self.seek(self.cursor - 1), "step_forward": lambda: self.seek(self.cursor + 1),
            "back_10": lambda: self.seek(self.cursor - 10), "forward_10": lambda: self.seek(self.cursor + 10),
            "first": lambda: self.seek(0), "last": lambda: self.seek(self._last()),
            "play": self.toggle_play, "slower": lambda: self._change_speed(-1), "faster": lambda: self._change_speed(1),
            **self.labelling.key_handlers(),
            "zoom_in": lambda: self.timeline.zoom(2.0), "zoom_out": lambda: self.timeline.zoom(0.5),
        }
        for name, (_, description) in REPLAY_KEYS.items():
            action = self.key_actions.get(name)
            if action is None:
                action = QAction(description, self)
                action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
                action.triggered.connect(handlers[name])
                self.addAction(action)
                self.key_actions[name] = action
            action.setShortcut(keys[name])

    def apply_keys(self, keys: dict[str, Any]) -> None:
        self._install_keys(keys)

    # -- opening --------------------------------------------------------------------------------
    @Slot(str)
    def open_episode(self, path: str) -> None:
        self.stop_playing()
        self.message.setText(f"Opening {path}…")
        self.message.show()
        self._open_request += 1  # only the newest open is shown, whatever order they finish in
        threading.Thread(target=self._load, args=(self._open_request, Path(path)), name="studio-replay-open",
                         daemon=True).start()

    def open_folder(self, folder: str) -> None:
        self.episodes.open_folder(Path(folder))

    def _load(self, request: int, path: Path) -> None:
        loaded, error = load_for_view(path)
        # the steps whose sound holds a bump, found here rather than on the GUI thread (a few ms per 100 steps)
        bumps = bump_positions(loaded[0]) if loaded is not None else []
        self._sig_loaded.emit(request, (loaded, bumps) if loaded is not None else None, str(path), error)

    @Slot(int, object, str, str)
    def _on_loaded(self, request: int, opened: tuple[tuple[Episode, Any, np.ndarray, str], list[int]] | None,
                   path: str, error: str) -> None:
        """The episode on screen, in two turns of the event loop (the frame, timeline and labels; then the
        map), so that neither holds the GUI thread long."""
        if request != self._open_request:
            return  # an older open finishing late
        if opened is None:
            self.message.setText(f"Cannot open {path}: {error.removeprefix(f'{path}: ')}")
            self.message.show()
            self.sig_open_failed.emit(error)
            return
        (episode, labels, self._map_path, blocker), bumps = opened
        self.labels.close()  # queues the save of unsaved labels; never waits for it
        if self.loader is not None:
            self.loader.close()  # it stops on its own thread; its late images are ignored
            self._old_loaders = [loader for loader in self._old_loaders if loader.running] + [self.loader]
        self.episode, self.shown_index = episode, -1
        assert episode.path is not None  # read from a file
        self.loader = FrameLoader(episode.path, len(episode))
        self.loader.sig_step_images.connect(self._on_images)
        self.loader.sig_frame.connect(self._on_sub_frame)
        self.loader.sig_failed.connect(self._loader_failed)
        self.message.hide()
        self.setWindowTitle(episode.title)
        self.trajectory.clear_episode()
        budget = int(episode.metadata.get("step_budget") or len(episode))
        self.panes.set_episode(episode, budget, draw_trajectory=False, bumps=bumps)  # the map follows in a later turn
        self.hearing.open(episode)
        self.labelling.open(blocker, labels)
        self.seek(0, audible=False)
        # A timer, not a posted call: the event loop paints the frame and serves other timers in between.
        QTimer.singleShot(MAP_AFTER_MS, self, lambda: self._show_map(request))

    def _show_map(self, request: int) -> None:
        if request != self._open_request or self.episode is None:
            return  # another episode was opened meanwhile
        self._show_trajectory(self.episode)
        log.info("opened %s (%d steps)", self.episode.path, len(self.episode))
        self.sig_opened.emit(str(self.episode.path))

    def _show_trajectory(self, episode: Episode) -> None:
        if not episode.judged:  # nothing read where the character was: an empty map must say why
            self.trajectory.set_note(f"No trajectory: this episode is unjudged ({episode.unjudged_reason}). Nothing "
                                     "read the game's memory, so no positions were recorded; frames and actions "
                                     "are all there is.")
            return
        self.trajectory.set_note("")
        path = self._map_path if len(self._map_path) else episode.path_xy  # thinned on the open thread
        self.trajectory.set_path(path[:, 0], path[:, 1])
        self.trajectory.set_backdrop(episode.map_outline())
        if len(episode.path_xy):
            self.trajectory.set_start(*episode.path_xy[0])
            self.trajectory.frame_on(path, margin=12.0)
        self.panes.draw_trajectory()  # the steps, their marks and the spans (the pane set's)
        self.trajectory.set_cursor(self.current_step)

    # -- seeking (never waits on disk) -------------------------------------------------------------
    def _last(self) -> int:
        return len(self.episode) - 1 if self.episode else 0

    @property
    def cursor(self) -> int:
        """The step position shown (0 before an episode is open)."""
        return max(0, self.step_cursor.index)

    @property
    def current_step(self) -> int:
        return self.panes.current_step

    @property
    def audio_played(self) -> int:
        """Stretches of sound handed to the speaker so far."""
        return self.hearing.played

    @Slot(int)
    def seek(self, index: int, audible: bool = True) -> None:
        """Move the cursor. The image is asked for at once; the other panes follow when it has been
        painted (or after PANES_FALLBACK_MS), so the frame is never queued behind their repaint. A move by the
        user while not playing plays a short snippet of the step's sound (`audible`)."""
        if self.episode is None:
            return
        if audible and not self.play_timer.isActive() and 0 <= index < len(self.episode):
            self.hearing.play_snippet(self.episode, index)
        self.step_cursor.move_to(index)  # the timeline follows at once; the slower panes in _update_panes
        step = self.episode.step(self.cursor).step
        self.position_label.setText(f"Step {step}  ({self.cursor + 1} of {len(self.episode)})")
        self.frame_view.set_overlay("top_right", f"step {step} / {len(self.episode)}")
        assert self.loader is not None
        self.loader.request_step(self.cursor)
        self._panes_due = True
        self.panes_timer.start(PANES_FALLBACK_MS)
        if self.play_timer.isActive() and not self._ticking:
            self._restart_clock()  # the user moved the cursor: play on from there

    @Slot()
    def _update_panes(self) -> None:
        if not self._panes_due or self.episode is None:
            return
        self._panes_due = False
        episode, cursor = self.episode, self.cursor
        self.panes.show_details()
        self.hearing.show(self.episode, cursor)
        between = episode.frames_between(cursor)
        self.sub_frames.blockSignals(True)
        self.sub_frames.setRange(0, len(between))
        self.sub_frames.setValue(0)
        self.sub_frames.blockSignals(False)
        self.sub_frames.setVisible(len(between) > 0)
        self.sub_frames_label.setVisible(len(between) > 0)
        self.sub_frames_label.setText(f"{len(between)} frames recorded during this step")

    @Slot(int)
    def seek_step(self, step: int) -> None:
        if self.episode is not None:
            self.seek(self.episode.index_of(step))

    @Slot(int, object)
    def _on_images(self, index: int, loaded: StepImages) -> None:
        if index != self.cursor or self.sender() is not self.loader:
            return  # overtaken by a newer seek, or from the previous episode's loader
        current = loaded.get("current")
        if current is not None:
            self.frame_view.show_frame(current)
            self.frame_view.repaint()  # the frame first: the panes below repaint in the next pass
        self.shown_index = index
        self.frames_displayed += 1
        self._show_damage(index, loaded)
        self.sig_image_shown.emit(index)
        self.panes.show_images(index, loaded.images, frame=False)  # the observation strip
        self._update_panes()

    def _show_damage(self, index: int, loaded: StepImages) -> None:
        """Mark a step whose images (or record) are damaged on the frame and in the status bar; a step whose
        sound is damaged in the status bar (its pictures are fine, and every other step plays)."""
        assert self.episode is not None
        overlay, detail = damage_note(self.episode.step(index).step, loaded,
                                      self.episode.damaged_records.get(index, ""))
        self.frame_view.set_overlay("top_left", overlay)
        sound_problem = self.episode.audio_problem(index)
        if overlay:
            said = overlay.replace("\n", ", ")
            self.say(f"{said} — {detail}. The other steps are unaffected.")
            self.sig_image_damaged.emit(index, detail)
        elif sound_problem is not None:
            self.say(f"{sound_problem.rstrip('.')}. This step plays silent; the other steps play.")
            overlay = sound_problem
        elif self._damage_said:
            self.say("")  # that was the previous step's damage
        self._damage_said = bool(overlay)

    @Slot(int)
    def _sub_frame_chosen(self, value: int) -> None:
        if self.episode is None or self.loader is None:
            return
        if value == 0:
            self.loader.request_step(self.cursor)
            return
        self.loader.request_frame(int(self.episode.frames_between(self.cursor)[value - 1]))

    @Slot(int, object)
    def _on_sub_frame(self, frame_index: int, pixels: np.ndarray) -> None:
        if self.sender() is self.loader:
            self.frame_view.show_frame(pixels)

    @Slot(str)
    def _loader_failed(self, message: str) -> None:
        if self.sender() is not self.loader:
            return  # the previous episode's loader
        self.message.setText(message)
        self.message.show()

    # -- playback (the clock drops steps it cannot draw) -------------------------------------------
    @property
    def speed_factor(self) -> float:
        return SPEEDS[self.speed.currentIndex()]

    @Slot()
    def toggle_play(self) -> None:
        if self.play_timer.isActive():
            self.stop_playing()
        elif self.episode is not None:
            if self.cursor >= self._last():
                self.seek(0, audible=False)
            self.play_timer.start(PLAY_TICK_MS)
            self._restart_clock()
            self.play_button.setText("Pause")

    def stop_playing(self) -> None:
        self.play_timer.stop()
        self.play_button.setText("Play")
        self.hearing.silence()

    @Slot()
    def _restart_clock(self) -> None:
        """Play on from the cursor: a plan of the rest of the episode by its ticks, timed from now, with its
        sound at 1× (silent at other speeds)."""
        self._play_origin = (time.perf_counter(), self.cursor)
        self._plan = PlaybackPlan.for_episode(self.episode, self.cursor) if self.episode is not None else None
        if self.play_timer.isActive():
            self.hearing.play_from(self.episode, self.cursor if self.speed_factor == 1.0 else None)

    def _change_speed(self, direction: int) -> None:
        self.speed.setCurrentIndex(max(0, min(len(SPEEDS) - 1, self.speed.currentIndex() + direction)))

    @Slot()
    def _play_tick(self) -> None:
        """Show the shot due now (game seconds since play began × speed); steps it had no time to draw are
        skipped, never queued."""
        started, _origin = self._play_origin
        plan = self._plan
        if plan is None or self.episode is None:
            self.stop_playing()
            return
        shot = plan.shot_at((time.perf_counter() - started) * self.speed_factor)
        if shot is None:
            self.stop_playing()
            self.seek(self._last(), audible=False)
            return
        if shot.step != self.cursor:
            self._ticking = True
            try:
                self.seek(shot.step)
            finally:
                self._ticking = False
        if shot.kind == "frame":  # a frame recorded while the step ran: the slider's 1..n, at its own tick
            between = self.episode.frames_between(shot.step)
            sub = int(np.searchsorted(between, shot.index)) + 1
            if sub > self.sub_frames.value():
                self.sub_frames.setValue(sub)

    # -- export ----------------------------------------------------------------------------------------
    @Slot()
    def open_export_clip(self) -> None:
        if self.clip_dialog is None:
            self.clip_dialog = ExportClipDialog(self)
            self.clip_dialog.sig_status.connect(self.say)
        self.clip_dialog.open_for(self)

    # -- settings and shutdown -------------------------------------------------------------------------
    def save_settings(self, settings: QSettings) -> None:
        settings.setValue("replay/state", self.saveState())
        save_sound(settings, "replay", self.sound)
        settings.setValue("replay/speed", self.speed_factor)  # the factor, not its caption

    def restore_settings(self, settings: QSettings) -> None:
        state = settings.value("replay/state")
        if isinstance(state, QByteArray):
            self.restoreState(state)
        restore_sound(settings, "replay", self.sound)
        speed = settings.value("replay/speed")
        try:
            self.speed.setCurrentIndex(SPEEDS.index(float(speed)))
        except (TypeError, ValueError):
            if isinstance(speed, str) and self.speed.findText(speed) >= 0:  # written as a caption by older versions
                self.speed.setCurrentText(speed)

    @Slot(str)
    def say(self, text: str) -> None:
        """One line in the status bar, shortened to fit; "" clears it."""
        self.status_message.set_full_text(text)

    def shut_down(self) -> None:
        """The application is closing: unsaved labels are written and the workers stop (bounded waits)."""
        self.stop_playing()
        self.hearing.close()
        self.panes.close()
        if self.clip_dialog is not None:
            self.clip_dialog.shut_down()
            self.clip_dialog.close()
        self.labels.shut_down()
        self.episodes.shut_down()
        if self.loader is not None:
            self.loader.close()
        for loader in [*self._old_loaders, self.loader]:
            if loader is not None:
                loader.join(10.0)
