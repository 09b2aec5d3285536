"""The Memory tab: find where the live game keeps its state, build a signature, save and try a profile.

Attached to the studio's live game (GameHost), whichever backend it runs (the built-in world, or
Minetest after Game -> Minetest); when that process changes (another game, a restart) the tab
follows it and drops value-scan candidates that belonged to the old one. Value scans and live
candidate values run on the scan worker's threads; the finder's jobs drive the live game on the
host's drive thread. The GUI thread only lays out results: every slot turns one event into one
call.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import Qt, QTimer, Slot
from PySide6.QtWidgets import (
    QFileDialog,
    QHeaderView,
    QLabel,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.evaluation.profile import ProfileError, load_profile
from core.finder import profile_writer
from core.finder.build import BuildResult
from core.finder.position import PositionResult
from core.finder.verify import VerifyResult
from core.memory.values import Condition
from studio.game_host import GameHost
from studio.memory.finder_panel import FinderPanel
from studio.memory.finder_worker import FinderWorker, Units
from studio.memory.scan_panel import ScanPanel
from studio.memory.scan_worker import ScanWorker
from widgets.plot_parts import view_box
from widgets.value_plot import ValuePlot

REFRESH_MS = 200
LIVE_ROWS = 40


class MemoryView(QWidget):
    def __init__(self, host: GameHost) -> None:
        super().__init__()
        self.host = host
        self.scans = ScanWorker()
        self.finder = FinderWorker(host)
        self.scan_panel = ScanPanel()
        self.finder_panel = FinderPanel()
        self.attached = QLabel("Waiting for the game…")
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["address", "at the last scan", "now"])
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.plot = ValuePlot()
        center = QSplitter(Qt.Orientation.Vertical)
        center.addWidget(self.table)
        center.addWidget(self.plot)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.scan_panel)
        split.addWidget(center)
        split.addWidget(self.finder_panel)
        split.setSizes([300, 640, 520])
        layout = QVBoxLayout(self)
        layout.addWidget(self.attached)
        layout.addWidget(split, 1)
        self.type_name = "f32"
        self.rows: list[tuple[int, Any]] = []
        self.selected: int | None = None
        self.found: PositionResult | None = None
        self._found_in: int | None = None   # the game process the search ran in
        self.built: BuildResult | None = None
        self.saved: Path | None = None
        self._busy = False
        self._job: str | None = None
        self._attached_pid: int | None = None
        self._units_for: str | None = None
        self._started = time.monotonic()
        self._last_reading = self._started
        self._connect()
        self.timer = QTimer(self)
        self.timer.setInterval(REFRESH_MS)
        self.timer.timeout.connect(self._tick)
        self.timer.start()

    def _connect(self) -> None:
        self.scan_panel.sig_first.connect(self.first_scan)
        self.scan_panel.sig_next.connect(self.next_scan)
        self.scan_panel.sig_undo.connect(self.undo)
        self.scans.sig_scanned.connect(self._on_scanned)
        self.scans.sig_values.connect(self._on_values)
        self.scans.sig_failed.connect(self._on_scan_failed)
        self.table.itemSelectionChanged.connect(self._on_select)
        self.finder_panel.sig_find.connect(self.find_position)
        self.finder_panel.sig_cancel.connect(self.cancel)
        self.finder_panel.sig_sign.connect(self.make_signature)
        self.finder_panel.sig_verify.connect(self.verify)
        self.finder_panel.sig_save.connect(self.choose_profile_file)
        self.finder_panel.sig_open.connect(self.choose_profile_to_open)
        self.finder_panel.sig_try.connect(self.try_profile)
        self.finder.sig_progress.connect(self._on_progress)
        self.finder.sig_found.connect(self._on_found)
        self.finder.sig_built.connect(self._on_built)
        self.finder.sig_verified.connect(self._on_verified)
        self.finder.sig_path.connect(self._on_path)
        self.finder.sig_failed.connect(self._on_failed)
        self.finder.sig_finished.connect(self._on_finished)
        self.host.sig_ready.connect(self._on_ready)

    # -- value scans ----------------------------------------------------------------------------
    @Slot(str)
    def _on_ready(self, description: str) -> None:
        self._follow_process()
        self.attached.setText(f"Attached to {description} — reads only; nothing is ever written to the game.")
        if self.host.backend.name != self._units_for:
            # The backend's own profile says how its positions are stored (Minetest: nodes x 10); a new
            # game starts at 1.0 until its user knows better.
            self._units_for = self.host.backend.name
            x = self.host.profile.fields.get("x") if self.host.profile is not None else None
            self.finder_panel.set_units(x.scale if x is not None else 1.0, x.units if x is not None else None)
        # Always the game's profile as it is now (a profile saved since may say it where none did)
        self.finder_panel.ground_turn = self.host.profile.ground_turn if self.host.profile is not None else None

    def _follow_process(self) -> None:
        """The game's process changed (restarted, or another game): candidates of the old one are void."""
        world = self.host.world
        pid = world.pid if world is not None else None
        if pid is None or pid == self._attached_pid:
            return
        old, self._attached_pid = self._attached_pid, pid
        self.attached.setText(f"Attached to {self.host.backend.title} (pid {pid}) — reads only; nothing is "
                              "ever written to the game.")
        if self.rows and old is not None:
            self.rows, self.selected = [], None
            self.table.setRowCount(0)
            self.plot.clear()
            self.scan_panel.status.setText(f"The game process changed ({old} → {pid}): its memory is new, so the "
                                           "candidates were dropped. Start with a first scan.")
            self.scan_panel.set_scanned(False, False)

    @Slot(str, bool, object)
    def first_scan(self, type_name: str, aligned: bool, condition: Condition) -> None:
        world = self.host.world
        if world is None:
            self._on_scan_failed("The game is not running yet.")
            return
        self.type_name = type_name
        self.scans.first_scan(world.pid, type_name, aligned, condition)

    @Slot(object)
    def next_scan(self, condition: Condition) -> None:
        self.scans.next_scan(condition)

    @Slot()
    def undo(self) -> None:
        self.scan_panel.set_busy()
        self.scans.undo()

    @Slot(dict)
    def _on_scanned(self, report: dict) -> None:
        self.rows = report["rows"]
        self.table.setRowCount(len(self.rows))
        for row, (address, value) in enumerate(self.rows):
            for column, text in enumerate((f"{address:#x}", f"{value!r}", "")):
                self.table.setItem(row, column, QTableWidgetItem(text))
        shown = f" (first {len(self.rows)} shown)" if report["count"] > len(self.rows) else ""
        self.scan_panel.status.setText("<br>".join(report["history"][-4:]) +
                                       f"<br><b>{report['count']:,} candidate(s)</b>{shown}")
        self.scan_panel.set_scanned(True, report["can_undo"])

    @Slot(str)
    def _on_scan_failed(self, message: str) -> None:
        self.scan_panel.show_error(message)
        self.scan_panel.set_scanned(bool(self.rows), False)

    @Slot()
    def _on_select(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        self.selected = self.rows[rows[0].row()][0] if rows else None
        self.plot.clear()
        self.plot.set_title(f"{self.selected:#x} ({self.type_name})" if self.selected is not None else "")

    @Slot()
    def _tick(self) -> None:
        self._follow_process()
        addresses = [address for address, _ in self.rows[:LIVE_ROWS]]
        if self.selected is not None and self.selected not in addresses:
            addresses.append(self.selected)
        if addresses:
            self.scans.request_values(addresses, self.type_name)

    @Slot(dict)
    def _on_values(self, reading: dict) -> None:
        values = reading["values"]
        for row, (address, _) in enumerate(self.rows[:LIVE_ROWS]):
            item = self.table.item(row, 2)
            if item is not None and address in values:
                item.setText(repr(values[address]))
        if self.selected is not None and self.selected in values:
            pad = self._pad_since(self._last_reading, reading["time"])
            self._last_reading = reading["time"]
            sticks = (pad.left_x, pad.left_y, pad.right_x, pad.right_y) if pad is not None else (0.0, 0.0, 0.0, 0.0)
            value = values[self.selected]
            self.plot.add(reading["time"] - self._started, value if isinstance(value, (int, float)) else None, sticks)

    def _pad_since(self, since: float, until: float) -> Any:
        """The pad held now, or the last one held since the previous reading (lockstep holds are brief)."""
        if self.host.pad_held is not None:
            return self.host.pad_held
        for started, ended, pad in reversed(self.host.monitor.log):
            if ended >= since and started <= until:
                return pad
            if ended < since:
                break
        return None

    # -- finding, signature, profile --------------------------------------------------------------
    def _set_busy(self, busy: bool, job: str | None = None) -> None:
        self._busy = busy
        self._job = job if busy else None
        self.finder_panel.set_state(busy, self.found is not None and bool(self.found.candidates),
                                    bool(self.built and self.built.ok), self.saved is not None)

    @Slot()
    def find_position(self) -> None:
        self._set_busy(True, "find")
        self.finder.find_position()

    @Slot()
    def cancel(self) -> None:
        self.finder.cancel.set()

    @Slot()
    def make_signature(self) -> None:
        if self.found is None or not self.found.candidates:
            return
        row = max(0, self.finder_panel.candidates.currentRow())
        scale, units = self.finder_panel.chosen_units()
        self._set_busy(True, "signature")
        # The other candidates are addresses in the searched process: of use only while it still runs.
        same_process = self._found_in is not None and self._found_in == self._attached_pid
        self.finder.make_signature(self.found.candidates[row], f"found_{self.host.backend.name}",
                                   Units(scale, units), self.found.candidates if same_process else None)

    @Slot()
    def verify(self) -> None:
        """The profile just built, or else the one saved or opened."""
        profile = self.built.profile if self.built is not None and self.built.ok else None
        # The built profile's own copy turned one way from forward to strafing right; a fresh process must agree
        right_turn = self.built.right_turn if profile is not None and self.built is not None else None
        if profile is None and self.saved is not None:
            try:
                profile = load_profile(self.saved)
            except ProfileError as exc:
                self._on_failed("verify", str(exc))
                return
        if profile is not None:
            self._set_busy(True, "verify")
            self.finder.verify(profile, right_turn)

    @Slot()
    def choose_profile_file(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save profile", "found_profile.yaml", "Profiles (*.yaml)")
        if path:
            self.save_profile(Path(path))

    @Slot()
    def choose_profile_to_open(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open a profile to verify or try", "", "Profiles (*.yaml)")
        if path:
            self.open_profile(Path(path))

    def open_profile(self, path: Path) -> None:
        """A profile file made elsewhere (`memory signature --out`, a colleague's): verify or try it here."""
        try:
            load_profile(path).check_usable()
        except ProfileError as exc:
            self._on_failed("open", str(exc))
            return
        self.saved = path
        self.finder_panel.status.setText(f"Opened {path}. Verify it on a fresh process, or try it on this one.")
        self._set_busy(False)

    def save_profile(self, path: Path) -> None:
        if self.built is None or self.built.profile_data is None or self.built.draft is None:
            return
        profile_writer.write(path, self.built.profile_data, self.built.draft)
        self.saved = path
        self.finder_panel.status.setText(f"Saved {path}. Try it: the evaluator reads the game through it.")
        self._set_busy(False)

    @Slot()
    def try_profile(self) -> None:
        if self.saved is not None:
            self._set_busy(True, "try")
            self.finder_panel.trajectory.set_path(np.zeros(0), np.zeros(0))
            self.finder.try_profile(self.saved)

    @Slot(str, float, int)
    def _on_progress(self, what: str, fraction: float, left: int) -> None:
        self.finder_panel.show_progress(what, fraction, left)

    @Slot(object)
    def _on_found(self, result: PositionResult) -> None:
        self.found = result
        self._found_in = self._attached_pid   # its addresses hold only in that process
        self.finder_panel.show_candidates(result.candidates)
        self.finder_panel.status.setText(f"{len(result.candidates)} candidate(s) in {result.seconds:.1f} s; the "
                                         "first is the best. Make a signature from the one selected."
                                         + (f" Warning: {result.warning}." if result.warning else ""))

    @Slot(object)
    def _on_built(self, result: BuildResult) -> None:
        self.built = result
        self.finder_panel.status.setText(("Signature: " if result.ok else "No signature: ") + result.message)
        if result.pick is not None:
            self.finder_panel.signature.setText(f"Signature: {result.pick.pattern.text}  (block starts "
                                                f"{result.pick.start:+d} bytes from x)")

    @Slot(object)
    def _on_verified(self, result: VerifyResult) -> None:
        self.finder_panel.status.setText((f"Verified on a fresh game process ({result.pid}): " if result.ok else
                                          "Verification failed: ") + result.message)

    @Slot(object)
    def _on_path(self, points: list) -> None:
        if points:
            xs, ys = (np.array(v, dtype=float) for v in zip(*points))
            self.finder_panel.trajectory.set_path(xs, ys)
            view_box(self.finder_panel.trajectory).setRange(xRange=(xs.min() - 6, xs.max() + 6),
                                                            yRange=(ys.min() - 6, ys.max() + 6))
            self.finder_panel.status.setText(f"The profile's evaluator followed the walk: {len(points)} samples.")

    @Slot(str, str)
    def _on_failed(self, job: str, message: str) -> None:
        self.finder_panel.status.setText(f"<span style='color:#b00'>{job}: {message}</span>")

    @Slot(str)
    def _on_finished(self, job: str) -> None:
        if job != self._job:
            return  # a job finished after another had started (its signals were still queued)
        self._set_busy(False)
        self.finder_panel.progress.setValue(1000 if job != "find" or self.found else 0)

    def shut_down(self) -> None:
        self.timer.stop()
        self.finder.close()
        self.scans.close()
