"""FrameLoader: reads an episode's images in one dedicated thread, serving only the newest request.

Seeks never wait on disk: the view asks for a step and carries on; when the images arrive they are
delivered to a bound slot in the GUI thread. Requests that were overtaken are dropped, and while
idle the loader reads the neighbouring steps into a small cache so that stepping is instant.

A damaged image costs only its step: the step is delivered with a placeholder and a note of what is
damaged ("damaged image at step N"), and every other step loads as usual.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PySide6.QtCore import QObject, Signal

from core.recording.errors import EpisodeFileError
from core.recording.reader import EpisodeReader
from studio.unexpected import unexpected

CACHE_STEPS = 48
PREFETCH = (1, -1, 2, 3, -2, 4)  # mostly forward: ← / → stepping and playback


@dataclass(frozen=True)
class StepImages:
    """A step's images by set name ("current", "previous", "left", "right"); None: not given at this step."""

    images: dict[str, np.ndarray | None]
    damaged: dict[str, str] = field(default_factory=dict)  # set name: what is wrong with its image here

    def get(self, name: str) -> np.ndarray | None:
        return self.images.get(name)


def damage_note(step: int, loaded: StepImages, record_problem: str = "") -> tuple[str, str]:
    """What to write over the frame ("damaged image at step N", one line per damaged part; "" when nothing
    is damaged) and the detail: each damaged part and what is wrong with it."""
    notes, details = [], [f"{name}: {problem}" for name, problem in sorted(loaded.damaged.items())]
    if loaded.damaged:
        which = "" if set(loaded.damaged) == {"current"} else f" ({', '.join(sorted(loaded.damaged))})"
        notes.append(f"damaged image at step {step}{which}")
    if record_problem:
        notes.append(f"damaged record at step {step}")
        details.append(record_problem)
    return "\n".join(notes), "; ".join(details)


def damaged_placeholder(shape: tuple[int, ...]) -> np.ndarray:
    """Grey diagonal stripes where an image could not be read: plainly not a frame of the game."""
    rows, columns = np.indices(shape[:2])
    stripes = np.where(((rows + columns) // 12) % 2 == 0, 56, 96).astype(np.uint8)
    return np.ascontiguousarray(np.repeat(stripes[:, :, None], shape[2] if len(shape) > 2 else 1, axis=2))


class FrameLoader(QObject):
    sig_step_images = Signal(int, object)  # step index, StepImages
    sig_frame = Signal(int, object)      # continuous-frame index, the frame
    sig_failed = Signal(str)             # the file could not be read any more, or one continuous frame

    def __init__(self, path: Path, step_count: int) -> None:
        super().__init__()
        self.path, self.step_count = Path(path), step_count
        self._lock = threading.Condition()
        self._wanted: tuple[str, int] | None = None
        self._stop = False
        self._cache: OrderedDict[int, StepImages] = OrderedDict()
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
        except EpisodeFileError as exc:
            self.sig_failed.emit(str(exc))
            return
        last_step = 0
        try:
            while True:
                with self._lock:
                    prefetch: int | None = None
                    while self._wanted is None and not self._stop:
                        prefetch = self._next_prefetch(last_step)
                        if prefetch is not None:
                            break
                        self._lock.wait()
                    if self._stop:
                        return
                    wanted, self._wanted = self._wanted, None
                if wanted is None:  # idle: warm the cache around the last step shown
                    assert prefetch is not None  # the wait above ends with a step to prefetch
                    self._images(reader, prefetch)
                    continue
                kind, index = wanted
                if kind == "step":
                    last_step = index
                    self.sig_step_images.emit(index, self._images(reader, index))
                else:
                    try:
                        self.sig_frame.emit(index, reader.frame(index))
                    except EpisodeFileError as exc:  # one damaged frame: say so, go on
                        self.sig_failed.emit(f"damaged frame {index} ({exc.part}): {exc.problem}")
                self.served += 1
        except Exception as exc:  # noqa: BLE001 - a bug must not end the loader silently: logged, and shown
            self.sig_failed.emit(unexpected(f"reading images of {self.path}", exc))
        finally:
            reader.close()

    def _next_prefetch(self, around: int) -> int | None:
        for offset in PREFETCH:
            index = around + offset
            if 0 <= index < self.step_count and index not in self._cache:
                return index
        return None

    def _images(self, reader: EpisodeReader, index: int) -> StepImages:
        cached = self._cache.get(index)
        if cached is not None:
            self._cache.move_to_end(index)
            return cached
        images: dict[str, np.ndarray | None] = {}
        damaged: dict[str, str] = {}
        try:
            names = reader.image_sets()
        except EpisodeFileError as exc:
            names, damaged["current"] = [], exc.problem
        for name in names:
            try:
                images[name] = reader.step_image(name, index)  # None: not given at this step
            except EpisodeFileError as exc:
                damaged[name] = exc.problem
                images[name] = self._placeholder(reader, name)
        loaded = StepImages(images, damaged)
        with self._lock:
            self._cache[index] = loaded
            while len(self._cache) > CACHE_STEPS:
                self._cache.popitem(last=False)
        return loaded

    @staticmethod
    def _placeholder(reader: EpisodeReader, name: str) -> np.ndarray | None:
        try:
            return damaged_placeholder(reader.image_shape(name))
        except EpisodeFileError:
            return None
