"""Python's cyclic garbage collector runs only on the GUI thread while the studio is open.

Automatic collection runs on whichever thread happens to allocate when a threshold is crossed: in the
studio that is often a worker (the world keeper parsing a profile, the episode thread, the recorder).
A closed window whose Python wrapper sits in a reference cycle is then destroyed on that worker, and Qt
objects must die on the thread they live on: Qt prints "Timers cannot be stopped from another thread"
and then may crash or deadlock the GUI thread (both were seen in CI, each time with a worker inside
yaml.safe_load when it struck). So automatic collection is turned off and a timer on the GUI thread
collects with the interpreter's own thresholds. Reference counting still frees everything that is not
in a cycle at once, on any thread, as before.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QCoreApplication, QObject, QTimer

CHECK_INTERVAL_MS = 500
_collector: GuiThreadCollector | None = None


def collect_due() -> int:
    """Collect the generations whose counts passed their thresholds, as automatic collection would;
    returns how many unreachable objects were found."""
    threshold0, threshold1, threshold2 = gc.get_threshold()
    count0, count1, count2 = gc.get_count()
    if count0 <= threshold0:
        return 0
    generation = 2 if count1 > threshold1 and count2 > threshold2 else 1 if count1 > threshold1 else 0
    return gc.collect(generation)


class GuiThreadCollector(QObject):
    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self.timer = QTimer(self)
        self.timer.timeout.connect(collect_due)
        self.timer.start(CHECK_INTERVAL_MS)


def collect_on_gui_thread_only() -> None:
    """Called on the GUI thread once a QApplication exists (idempotent): from now on cycles are
    collected here and nowhere else."""
    global _collector
    app = QCoreApplication.instance()
    if app is None:
        raise RuntimeError("collect_on_gui_thread_only() needs the QApplication")
    try:
        if _collector is not None and _collector.parent() is app:
            return
    except RuntimeError:  # the previous application (and its collector) is gone
        pass
    gc.disable()
    _collector = GuiThreadCollector(app)
