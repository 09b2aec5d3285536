"""A closed window in a reference cycle is destroyed on the GUI thread, never on a worker that happens to
allocate (Qt objects destroyed on another thread crashed and deadlocked the studio in CI)."""

from __future__ import annotations

import threading
import weakref
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QWidget

from studio.gui_thread_gc import collect_on_gui_thread_only


class CyclicWindow(QWidget):
    def __init__(self) -> None:
        super().__init__()
        self.timer = QTimer(self)  # a Qt timer must be stopped on its own thread
        self.timer.start(1000)
        QLabel("a window that refers to itself", self)
        self.myself = self


def test_a_window_in_a_cycle_is_collected_on_the_gui_thread_not_on_an_allocating_worker(qtbot: Any) -> None:
    collect_on_gui_thread_only()
    collected_on: list[str] = []
    window = CyclicWindow()
    window.show()
    window.close()
    gone = weakref.ref(window, lambda _ref: collected_on.append(threading.current_thread().name))
    del window

    kept: list[list[int]] = []

    def allocate() -> None:  # far past every threshold of automatic collection, and kept (as a profile's data is)
        kept.extend([i] for i in range(200_000))

    worker = threading.Thread(target=allocate, name="allocating-worker")
    worker.start()
    worker.join()
    assert gone() is not None, "the window was collected on the worker thread"

    qtbot.waitUntil(lambda: gone() is None, timeout=10_000)
    assert collected_on == ["MainThread"]
