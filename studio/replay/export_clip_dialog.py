"""Export clip…: choose a step range (prefilled from the timeline's selection), a format and the overlays,
then write the clip off the GUI thread with progress and cancel. The dialog is not modal: the replay
stays usable while a clip is written."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np
from PySide6.QtCore import Qt, QUrl, Signal, Slot
from PySide6.QtGui import QCloseEvent, QDesktopServices, QStandardItemModel
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from core.export.clip import ClipOptions, ClipResult
from core.export.overlay import OVERLAYS, OverlayOptions
from core.export.video import MP4_NEEDS_PYAV, mp4_available
from studio.replay.clip_export import ClipExportJob

if TYPE_CHECKING:
    from studio.replay.replay_view import ReplayView

OVERLAY_TEXT = {"step": "Step number and action", "thought": "The agent's thought", "assessment": "Self-assessment "
                "colour", "trajectory": "Trajectory inset", "labels": "Labels and interventions"}
FORMATS = ((".mp4", "MP4 (H.264: browsers, slides, players)", 960), (".gif", "GIF (animated image)", 480))


class ExportClipDialog(QDialog):
    sig_exported = Signal(str)  # the path of a clip that was written
    sig_status = Signal(str)    # a line for the replay view's status bar

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export clip")
        self.setModal(False)
        self.episode: Path | None = None
        self.job = ClipExportJob()
        self.first = QSpinBox()
        self.last = QSpinBox()
        self.format = QComboBox()
        for suffix, text, _ in FORMATS:
            self.format.addItem(text, suffix)
        if not mp4_available():
            cast(QStandardItemModel, self.format.model()).item(0).setEnabled(False)  # a combo box's own model
            self.format.setItemData(0, MP4_NEEDS_PYAV, Qt.ItemDataRole.ToolTipRole)
            self.format.setCurrentIndex(1)
        self.width_box = QSpinBox()
        self.width_box.setRange(160, 3840)
        self.width_box.setSingleStep(160)
        self.width_box.setSuffix(" px")
        self.overlays = {name: QCheckBox(OVERLAY_TEXT[name]) for name in OVERLAYS}
        for box in self.overlays.values():
            box.setChecked(True)
        self.use_frames = QCheckBox("Continuous frames at the game's rate")
        self.with_sound = QCheckBox("With sound")
        self.with_sound.setToolTip("The recording's sound, as AAC in the MP4 (a GIF has no sound)")
        self.path = QLineEdit()
        self.choose = QPushButton("Choose…")
        self.progress = QProgressBar()
        self.status = QLabel("")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.status.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.status.setMinimumHeight(self.status.fontMetrics().lineSpacing() * 4)  # messages never squeeze the form
        self.export_button = QPushButton("Export")
        self.cancel_button = QPushButton("Cancel export")
        self.show_button = QPushButton("Show in folder")
        self.close_button = QPushButton("Close")
        self._last_written: Path | None = None
        self._has_frames = False
        self._has_audio = False
        self._layout()
        self._format_changed()
        self.job.sig_progress.connect(self._on_progress)
        self.job.sig_done.connect(self._on_done)
        self.job.sig_failed.connect(self._on_failed)
        self.job.sig_cancelled.connect(self._on_cancelled)
        self.format.currentIndexChanged.connect(self._format_changed)
        self.choose.clicked.connect(self._choose)
        self.export_button.clicked.connect(self.export)
        self.cancel_button.clicked.connect(self.job.cancel)
        self.show_button.clicked.connect(self._show_in_folder)
        self.close_button.clicked.connect(self.close)
        self._set_running(False)

    def _layout(self) -> None:
        form = QFormLayout()
        steps = QHBoxLayout()
        steps.addWidget(self.first)
        steps.addWidget(QLabel("to"))
        steps.addWidget(self.last)
        form.addRow("Steps", steps)
        form.addRow("Format", self.format)
        form.addRow("Width", self.width_box)
        overlays = QVBoxLayout()
        for box in self.overlays.values():
            overlays.addWidget(box)
        form.addRow("Overlays", overlays)
        form.addRow("", self.use_frames)
        form.addRow("", self.with_sound)
        where = QHBoxLayout()
        where.addWidget(self.path, 1)
        where.addWidget(self.choose)
        form.addRow("Save as", where)
        buttons = QHBoxLayout()
        for button in (self.export_button, self.cancel_button, self.show_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.close_button)
        column = QVBoxLayout(self)
        column.addLayout(form)
        column.addWidget(self.progress)
        column.addWidget(self.status)
        column.addLayout(buttons)

    # -- the episode and the range -----------------------------------------------------------------
    def open_for(self, view: ReplayView) -> None:
        """Show the dialog for the replay view's episode: the timeline's selection, else the selected label
        span, else twenty steps from the cursor."""
        episode = view.episode
        if episode is None:
            self.sig_status.emit("Open an episode first, then select steps on its timeline (Shift+drag).")
            return
        assert episode.path is not None  # read from a file
        steps = episode.step_numbers
        editor, selected = view.labels.editor, view.labels.selected
        if view.timeline.selection is not None:
            first, last = (int(steps[i]) for i in view.timeline.selection)
        elif editor is not None and selected is not None and selected < len(editor.spans):
            first, last = editor.spans[selected].start, editor.spans[selected].end
        else:
            first, last = int(steps[view.cursor]), int(steps[min(view.cursor + 19, len(steps) - 1)])
        self.set_episode(episode.path, steps, len(episode.frame_ticks) > 0, first, last,
                         has_audio=episode.audio_format is not None)
        self.show()
        self.raise_()

    def set_episode(self, path: Path, steps: np.ndarray, has_frames: bool, first_step: int, last_step: int,
                    has_audio: bool = False) -> None:
        """Prefill for an episode; the step range is in step numbers. `has_audio`: the recording holds sound, so
        an MP4 carries it unless the user unticks "With sound"."""
        if self.job.running:
            return  # the range of the running export stays on screen until it ends
        self.episode = Path(path)
        for box in (self.first, self.last):
            box.setRange(int(steps[0]), int(steps[-1]))
        self.first.setValue(first_step)
        self.last.setValue(last_step)
        self._has_frames = has_frames
        self.use_frames.setEnabled(has_frames)
        self.use_frames.setChecked(has_frames)
        self._has_audio = has_audio
        self.with_sound.setChecked(has_audio)
        self._sound_enabled()
        self._suggest_path()
        self.progress.setValue(0)
        self.status.setText("")

    @property
    def suffix(self) -> str:
        return str(self.format.currentData())

    def _suggest_path(self) -> None:
        if self.episode is not None:
            name = f"{self.episode.stem}_steps_{self.first.value()}-{self.last.value()}{self.suffix}"
            self.path.setText(str(self.episode.with_name(name)))

    @Slot()
    def _format_changed(self) -> None:
        self.width_box.setValue(next(width for suffix, _, width in FORMATS if suffix == self.suffix))
        text = self.path.text().strip()
        if text:
            self.path.setText(str(Path(text).with_suffix(self.suffix)))
        self._sound_enabled()

    def _sound_enabled(self, running: bool = False) -> None:
        """Sound is offered for an MP4 of a recording that has some."""
        self.with_sound.setEnabled(not running and self._has_audio and self.suffix == ".mp4")
        tip = ("The recording's sound, as AAC in the MP4" if self._has_audio else "This recording has no sound") \
            if self.suffix == ".mp4" else "A GIF has no sound"
        self.with_sound.setToolTip(tip)

    @Slot()
    def _choose(self) -> None:
        chosen, _ = QFileDialog.getSaveFileName(self, "Export clip", self.path.text(),
                                                "MP4 video (*.mp4);;GIF image (*.gif)")
        if chosen:
            self.path.setText(chosen)
            index = self.format.findData(Path(chosen).suffix.lower())
            if index >= 0 and cast(QStandardItemModel, self.format.model()).item(index).isEnabled():
                self.format.setCurrentIndex(index)

    # -- exporting ------------------------------------------------------------------------------------
    def options(self) -> ClipOptions:
        shown = frozenset(name for name, box in self.overlays.items() if box.isChecked())
        return ClipOptions(OverlayOptions(shown, self.width_box.value()), use_frames=self.use_frames.isChecked(),
                           audio=self.with_sound.isChecked() and self._has_audio and self.suffix == ".mp4")

    @Slot()
    def export(self) -> None:
        if self.episode is None or self.job.running:
            return
        text = self.path.text().strip()
        if not text:
            self.status.setText("Choose where to save the clip.")
            return
        out = Path(text).expanduser()
        if out.suffix.lower() != self.suffix:
            out = out.with_suffix(self.suffix)
            self.path.setText(str(out))
        first, last = sorted((self.first.value(), self.last.value()))
        self._set_running(True)
        self.status.setText(f"Writing steps {first}-{last} to {out.name}…")
        self.status.setToolTip(str(out))
        self.job.start(self.episode, (first, last), out, self.options())

    def _set_running(self, running: bool) -> None:
        for widget in (self.first, self.last, self.format, self.width_box, self.path, self.choose, self.export_button,
                       *self.overlays.values()):
            widget.setEnabled(not running)
        self.use_frames.setEnabled(not running and self._has_frames)
        self._sound_enabled(running)
        self.cancel_button.setEnabled(running)
        self.show_button.setEnabled(not running and self._last_written is not None)

    @Slot(int, int)
    def _on_progress(self, done: int, total: int) -> None:
        self.progress.setRange(0, total)
        self.progress.setValue(done)

    @Slot(object)
    def _on_done(self, result: ClipResult) -> None:
        self._last_written = result.path
        self._set_running(False)
        source = "continuous frames at the game's rate" if result.continuous else "step images"
        notes = "".join(f"\nNote: {note}" for note in result.notes)
        self.status.setText(f"Wrote {result.path.name}: steps {result.first_step}-{result.last_step}, "
                            f"{result.seconds:.1f} s, {result.size[0]}×{result.size[1]}, from {source}"
                            f"{', with sound' if result.audio else ''}.{notes}")
        self.status.setToolTip(str(result.path))
        self.show_button.setEnabled(True)
        self.sig_exported.emit(str(result.path))
        self.sig_status.emit(f"Clip written: {result.path}")

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self._set_running(False)
        self.progress.setValue(0)
        self.status.setText(f"Could not export the clip: {message}")

    @Slot(str)
    def _on_cancelled(self, message: str) -> None:
        self._set_running(False)
        self.progress.setValue(0)
        self.status.setText(f"Cancelled: {message}.")

    @Slot()
    def _show_in_folder(self) -> None:
        if self._last_written is not None:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(self._last_written.parent)))

    def shut_down(self) -> None:
        """Stop a running export (its temporary file is removed) and wait for the thread."""
        self.job.cancel()
        self.job.wait(10.0)

    def closeEvent(self, event: QCloseEvent) -> None:
        self.job.cancel()  # closing the dialog stops the export; the thread ends at the next picture
        super().closeEvent(event)
