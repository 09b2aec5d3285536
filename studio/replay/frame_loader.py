"""FrameLoader: reads an episode's images in one dedicated thread, serving only the newest request.

Seeks never wait on disk: the view asks for a step and carries on; when the images arrive they are
delivered to a bound slot in the GUI thread. Requests that were overtaken are dropped, and while
idle the loader reads the neighbouring steps into a small cache so that stepping is instant.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QObject, Signal

from core.recording.reader import EpisodeFileError, EpisodeReader

CACHE_STEPS = 48
PREFETCH = (1, -1, 2, 3, -2, 4)  # mostly forward: ← / → stepping and playback


class FrameLoader(QObject):
    sig_step_images = Signal(int, dict)  # step index, {"current": array, "previous": ..., "left": ..., "right": ...}
    sig_frame = Signal(int, object)      # continuous-frame index, the frame
    sig_failed = Signal(str)             # the file could not be read any more

    def __init__(self, path: Path, step_count: int) -> None:
        super().__init__()
        self.path, self.step_count = Path(path), step_count
        self._lock = threading.Condition()
        self._wanted: tuple[str, int] | None = None
        self._stop = False
        self._cache: OrderedDict[int, dict[str, np.ndarray]] = OrderedDict()
        self._unreadable: set[int] = set()
        self.requests = 0
        self.served = 0
        self._thread = threading.Thread(target=self._serve, name="studio-replay-loader", daemon=True)
        self._thread.start()

    def request_step(self, index: int) -> None:
        with self._lock:
            self._wanted = ("step", index)
            self.requests += 1
            self._lock.notify()

    def request_frame(self, frame_index: int) -> None:
        with self._lock:
            self._wanted = ("frame", frame_index)
            self.requests += 1
            self._lock.notify()

    def close(self) -> None:
        """Stop serving; returns at once (the thread ends after the read in progress, if any)."""
        with self._lock:
            self._stop = True
            self._lock.notify()

    def join(self, timeout: float) -> None:
        """Wait for the thread to end (after close(); the application is closing)."""
        self._thread.join(timeout)

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    # -- the loader thread ---------------------------------------------------------------------
    def _serve(self) -> None:
        try:
            reader = EpisodeReader(self.path)
        except (EpisodeFileError, OSError) as exc:
            self.sig_failed.emit(str(exc))
            return
        last_step = 0
        try:
            while True:
                with self._lock:
                    while self._wanted is None and not self._stop:
                        prefetch = self._next_prefetch(last_step)
                        if prefetch is not None:
                            break
                        self._lock.wait()
                    if self._stop:
                        return
                    wanted, self._wanted = self._wanted, None
                if wanted is None:  # idle: warm the cache around the last step shown
                    try:
                        self._images(reader, prefetch)  # type: ignore[arg-type]
                    except (OSError, KeyError, ValueError, RuntimeError):
                        self._unreadable.add(prefetch)  # type: ignore[arg-type]  # reported if it is asked for
                    continue
                kind, index = wanted
                try:
                    if kind == "step":
                        last_step = index
                        self.sig_step_images.emit(index, self._images(reader, index))
                    else:
                        self.sig_frame.emit(index, reader.frame(index))
                except (OSError, KeyError, ValueError, RuntimeError) as exc:  # one damaged image: say so, go on
                    self.sig_failed.emit(f"step {index + 1} of {self.path} cannot be read: {exc}")
                self.served += 1
        finally:
            reader.close()

    def _next_prefetch(self, around: int) -> int | None:
        for offset in PREFETCH:
            index = around + offset
            if 0 <= index < self.step_count and index not in self._cache and index not in self._unreadable:
                return index
        return None

    def _images(self, reader: EpisodeReader, index: int) -> dict[str, Any]:
        cached = self._cache.get(index)
        if cached is not None:
            self._cache.move_to_end(index)
            return cached
        images = {}
        for name in reader.image_sets():
            image = reader.image(name, index)
            images[name] = image if image.any() else None  # all zeros: "not given at this step"
        with self._lock:
            self._cache[index] = images
            while len(self._cache) > CACHE_STEPS:
                self._cache.popitem(last=False)
        return images
