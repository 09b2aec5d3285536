"""ResultsView: a run folder's report, the same numbers as `python main.py report FOLDER` (one computation,
core.analysis.report.build_report): success rate per agent x granularity x category, movement metrics,
the failure taxonomy (human labels where confirmed) and IM rate against success rate with Pearson r.
Exports the numbers as CSV and the view as PNG. Problems are shown in the banner, never raised.

"Follow" watches a run that is still filling: every FOLLOW_INTERVAL_MS the loader's thread looks at the
folder's results.jsonl and errors.jsonl, and rebuilds the report only when a row was added."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from core.analysis.report import unjudged_line, write_long_csv
from studio.results_loader import ResultsLoader
from widgets.im_scatter import ImScatter
from widgets.message_banner import MessageBanner
from widgets.results_tables import MetricsTable, SuccessTable
from widgets.taxonomy_chart import TaxonomyChart

_SHOWN_WARNINGS = 3
FOLLOW_INTERVAL_MS = 2000
_EMPTY: dict[str, Any] = {"sr": [], "metrics": [], "failure_sources": {}, "points": [], "correlation": None}


def _boxed(title: str, widget: QWidget) -> QGroupBox:
    box = QGroupBox(title)
    layout = QVBoxLayout(box)
    layout.setContentsMargins(4, 4, 4, 4)
    layout.addWidget(widget)
    return box


def with_extension(path: str, extension: str) -> str:
    """`name` typed without an extension becomes name.csv (or .png): the format the dialog was for."""
    return path if Path(path).suffix.lower() == f".{extension}" else f"{path}.{extension}"


def summary_text(report: dict[str, Any]) -> str:
    human = sum(r["from_human"] for r in report["failures"])
    automatic = sum(r["automatic"] for r in report["failures"])
    errors = len(report.get("infrastructure_errors", []))
    apart = (f" {errors} episode(s) ended in an infrastructure error: not results, counted in no table; rerun "
             "the same `python main.py run` command to retry them.") if errors else ""
    unjudged = unjudged_line(report)
    if unjudged:  # free play with no memory profile: neither a success nor a failure
        apart += f" {unjudged}: free play nothing judged, counted in no table and never as a failure."
    return (f"{report['episodes']} episodes from {len(report['failures'])} agent(s); "
            f"{report['privileged_episodes']} privileged driver episode(s) kept out. Failure categories: "
            f"{human} from human labels, {automatic} automatic suggestion(s), {report['disputed']} disputed.{apart}")


class ResultsView(QWidget):
    sig_status = Signal(str)  # one line for the status bar: loading, loaded, exported, failed
    sig_loaded = Signal(str)  # the folder whose report is now shown

    def __init__(self) -> None:
        super().__init__()
        self.folder: Path | None = None
        self.report: dict[str, Any] | None = None
        self.loader = ResultsLoader()
        self.loader.sig_loaded.connect(self._on_loaded)
        self.loader.sig_failed.connect(self._on_failed)
        self.loader.sig_unchanged.connect(self._on_unchanged)
        self.open_button = QPushButton("Open run folder…")
        self.reload_button = QPushButton("Reload")
        self.follow_box = QCheckBox("Follow")
        self.follow_box.setToolTip("Refresh as a run that is still going adds results (looks every "
                                   f"{FOLLOW_INTERVAL_MS // 1000} s; rebuilds only when a row was added)")
        self.follow_timer = QTimer(self)
        self.follow_timer.setInterval(FOLLOW_INTERVAL_MS)
        self.follow_timer.timeout.connect(self._poll)
        self.followed_at = ""  # when following last found the folder changed or unchanged
        self.folder_label = QLabel("No run folder open: choose one written by `python main.py run --out`.")
        self.folder_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.csv_button = QPushButton("Export CSV…")
        self.png_button = QPushButton("Export PNG…")
        self.banner = MessageBanner()
        self.summary = QLabel("")
        self.summary.setWordWrap(True)
        self.success_table, self.metrics_table = SuccessTable(), MetricsTable()
        self.taxonomy, self.scatter = TaxonomyChart(), ImScatter()
        self.correlation_caption = QLabel("")
        self.correlation_caption.setWordWrap(True)
        self.correlation_caption.setTextFormat(Qt.TextFormat.RichText)
        self.correlation_caption.setToolTip("Pearson r between IM rate and success rate, with n, a two-sided "
                                            "p-value and a bootstrap 95% interval (docs/metrics.md)")
        self._build_layout()
        self.open_button.clicked.connect(self._ask_folder)
        self.reload_button.clicked.connect(self.reload)
        self.follow_box.toggled.connect(self._set_following)
        self.csv_button.clicked.connect(self._ask_csv)
        self.png_button.clicked.connect(self._ask_png)
        self._show(None)

    def _build_layout(self) -> None:
        bar = QHBoxLayout()
        for widget in (self.open_button, self.reload_button, self.follow_box):
            bar.addWidget(widget)
        bar.addWidget(self.folder_label, 1)
        bar.addWidget(self.csv_button)
        bar.addWidget(self.png_button)
        tables = QSplitter(Qt.Orientation.Vertical)
        tables.addWidget(_boxed("Success rate by granularity and task category", self.success_table))
        tables.addWidget(_boxed("Movement metrics", self.metrics_table))
        plots = QSplitter(Qt.Orientation.Vertical)
        plots.addWidget(self.taxonomy)
        scatter = QWidget()
        scatter_layout = QVBoxLayout(scatter)
        scatter_layout.setContentsMargins(0, 0, 0, 0)
        scatter_layout.addWidget(self.scatter, 1)
        scatter_layout.addWidget(self.correlation_caption)
        plots.addWidget(scatter)
        body = QSplitter(Qt.Orientation.Horizontal)
        body.setChildrenCollapsible(False)
        body.addWidget(tables)
        body.addWidget(plots)
        body.setSizes([650, 750])
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.banner)
        layout.addWidget(self.summary)
        layout.addWidget(body, 1)

    # -- loading ---------------------------------------------------------------------------
    def open_folder(self, path: str | Path) -> None:
        """Show `path`'s report once it is built (off the GUI thread); sig_loaded or a banner error follows."""
        self.folder = Path(path)
        self.folder_label.setText(str(self.folder))
        self.reload_button.setEnabled(True)
        self.banner.show_message("info", f"Loading {self.folder} …")
        self.sig_status.emit(f"Loading results from {self.folder}")
        self.loader.request(self.folder)

    @Slot()
    def reload(self) -> None:
        """Read the folder again (new episodes, new human labels)."""
        if self.folder is not None:
            self.open_folder(self.folder)

    def shut_down(self) -> None:
        """Stop following and wait for a report being built (call when the studio closes)."""
        self.follow_timer.stop()
        self.loader.wait()

    @Slot(bool)
    def _set_following(self, on: bool) -> None:
        if on:
            self.follow_timer.start()
        else:
            self.follow_timer.stop()
            self.folder_label.setText(str(self.folder) if self.folder is not None else self.folder_label.text())

    @Slot()
    def _poll(self) -> None:
        """On the timer: ask for a rebuild if the folder changed; never pile requests up behind a slow one."""
        if self.folder is None or self.loader.busy:
            return
        self.loader.request(self.folder, since=self.loader.signature)

    @Slot(int)
    def _on_unchanged(self, request: int) -> None:
        if request == self.loader.latest and self.folder is not None:
            self.followed_at = time.strftime("%H:%M:%S")
            self.folder_label.setText(f"{self.folder}  (following; no new results at {self.followed_at})")

    @Slot(int, object)
    def _on_loaded(self, request: int, report: dict[str, Any]) -> None:
        if request == self.loader.latest:
            self._show(report)
            if self.follow_box.isChecked() and self.folder is not None:
                self.followed_at = time.strftime("%H:%M:%S")
                self.folder_label.setText(f"{self.folder}  (following; updated at {self.followed_at})")

    @Slot(int, str)
    def _on_failed(self, request: int, message: str) -> None:
        if request == self.loader.latest:
            self._show_error(message)

    def _show_error(self, message: str) -> None:
        self._show(None)
        self.banner.show_message("error", f"Cannot show results: {message}")
        self.sig_status.emit(f"Results: {message}")

    def _show(self, report: dict[str, Any] | None) -> None:
        self.report = report
        shown = report or _EMPTY
        self.success_table.set_rows(shown["sr"])
        self.metrics_table.set_rows(shown["metrics"])
        self.taxonomy.set_sources(shown["failure_sources"])
        self.scatter.set_points(shown["points"], shown["correlation"])
        self.correlation_caption.setText(self.scatter.caption if report is not None else "")
        self.csv_button.setEnabled(report is not None)
        self.png_button.setEnabled(report is not None)
        self.reload_button.setEnabled(self.folder is not None)
        self.summary.setText(summary_text(report) if report is not None else "")
        if report is None:
            return
        self._show_warnings(report)
        self.sig_status.emit(f"Results: {report['episodes']} episodes from {report['folder']}")
        self.sig_loaded.emit(report["folder"])

    def _show_warnings(self, report: dict[str, Any]) -> None:
        warnings = report["warnings"]
        if report["episodes"] == 0 and unjudged_line(report):
            self.banner.show_message("info", f"Every episode in {report['folder']} is unjudged: the game has no "
                                     "memory profile, so nothing judged success and the tables stay empty. Make "
                                     "one with `python main.py memory signature --backend FILE --out PROFILE` "
                                     "(docs/finding-memory.md).", "\n".join(warnings))
        elif report["episodes"] == 0:
            self.banner.show_message("warning", f"{report['folder']}/results.jsonl has no finished episodes yet. "
                                     "Run `python main.py run --out` on this folder (or let it finish some), "
                                     "then press Reload.", "\n".join(warnings))
        elif warnings:
            more = f"\n… and {len(warnings) - _SHOWN_WARNINGS} more (hover to see all)" \
                if len(warnings) > _SHOWN_WARNINGS else ""
            self.banner.show_message("warning", "\n".join(warnings[:_SHOWN_WARNINGS]) + more, "\n".join(warnings))
        else:
            self.banner.clear_message()

    # -- exporting -------------------------------------------------------------------------
    def export_csv(self, path: str | Path) -> bool:
        """Every number shown, as one tidy CSV (core.analysis.report.long_rows). False, and a banner, on failure."""
        if self.report is None:
            self.banner.show_message("error", "Open a run folder first: there are no results to export.")
            return False
        try:
            write_long_csv(Path(path), self.report)
        except OSError as exc:
            self.banner.show_message("error", f"Could not write {path} ({exc}). Choose a writable folder.")
            return False
        self.sig_status.emit(f"Exported the results' numbers to {path}")
        return True

    def export_png(self, path: str | Path) -> bool:
        """A picture of the whole view. False, and a banner, on failure."""
        if self.report is None:
            self.banner.show_message("error", "Open a run folder first: there are no results to export.")
            return False
        if not self.grab().save(str(path), "PNG"):
            self.banner.show_message("error", f"Could not write the image {path}. Check that the folder exists "
                                     "and is writable, and choose another name.")
            return False
        self.sig_status.emit(f"Saved a picture of the results to {path}")
        return True

    @Slot()
    def _ask_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Open a run folder (written by `python main.py run`)")
        if folder:
            self.open_folder(folder)

    @Slot()
    def _ask_csv(self) -> None:
        path = self._ask_path("Export the results as CSV", "results", "csv", "CSV (*.csv)")
        if path:
            self.export_csv(path)

    @Slot()
    def _ask_png(self) -> None:
        path = self._ask_path("Export the results as PNG", "results", "png", "PNG image (*.png)")
        if path:
            self.export_png(path)

    def _ask_path(self, title: str, stem: str, extension: str, file_filter: str) -> str:
        """A save dialog opened in the run folder; the extension is added when the name has none."""
        start = (self.folder or Path.cwd()) / f"{stem}.{extension}"
        path, _ = QFileDialog.getSaveFileName(self, title, str(start), file_filter)
        return with_extension(path, extension) if path else ""

    def closeEvent(self, event: Any) -> None:
        self.shut_down()
        super().closeEvent(event)
