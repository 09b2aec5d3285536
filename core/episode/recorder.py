"""EpisodeRecorder: writes an Episode to its HDF5 file as it grows, off the step's critical path.

It subscribes to the episode and hands each event to a writer thread through a bounded queue, so
compressing images and flushing the file overlap the next step instead of delaying it. The queue is
bounded (MAX_PENDING events): a disk slower than the episode makes the runner wait, never drops a step.
The file is flushed whenever the writer has caught up (every step, unless steps arrive faster than
they are written). A write error is raised to the runner at its next append (and by close()), so the
episode ends with the reason, as a synchronous write would. close() drains the queue before writing
the result, so a Stop, a Ctrl+C or an error loses nothing that was appended; only a kill -9 can lose
the steps still queued.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from typing import Any

from core.episode.model import AudioAppended, Episode, EpisodeEvent, FrameAppended, SamplesAppended, StepAppended
from core.episode.records import EpisodeResult
from core.recording.writer import EpisodeWriter

MAX_PENDING = 16  # events: a few steps' images (each about 0.7 MB at 640x360) at most


class RecordingError(OSError):
    """Writing the episode file failed; the message names the file and the cause."""


_CLOSE = object()


class EpisodeRecorder:
    def __init__(self, episode: Episode, writer: EpisodeWriter, max_pending: int = MAX_PENDING) -> None:
        self.episode, self.writer = episode, writer
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=max_pending)
        self._error: BaseException | None = None
        self._closed = False
        self._thread = threading.Thread(target=self._write_all, name="episode-recorder", daemon=True)
        self._thread.start()
        self._unsubscribe = episode.subscribe(self._on_event)

    @property
    def steps_written(self) -> int:
        return self.writer.steps_written

    def _raise_if_failed(self) -> None:
        if self._error is not None:
            raise RecordingError(f"writing {self.writer.path} failed: {self._error}") from self._error

    def _on_event(self, event: EpisodeEvent) -> None:
        self._raise_if_failed()
        if isinstance(event, StepAppended | SamplesAppended | FrameAppended | AudioAppended):
            self._queue.put(event)  # blocks while MAX_PENDING are waiting: back-pressure, never loss

    def _write_all(self) -> None:
        while True:
            event = self._queue.get()
            if event is _CLOSE:
                return
            if self._error is not None:
                continue  # keep draining so the runner is never blocked on a dead writer
            try:
                self._write(event)
                if self._queue.empty():  # flushed once the writer has caught up: one flush per batch of steps
                    self.writer.flush()
            except Exception as exc:  # noqa: BLE001 - handed to the runner's thread at its next append
                self._error = exc

    def _write(self, event: EpisodeEvent) -> None:
        if isinstance(event, StepAppended):
            self.writer.add_step(event.record.table_row(), event.record.record_json(), dict(event.images), flush=False)
        elif isinstance(event, SamplesAppended):
            self.writer.add_samples([sample.to_json() for sample in event.samples])
        elif isinstance(event, FrameAppended):
            self.writer.add_frame(event.pixels, event.tick)
        elif isinstance(event, AudioAppended) and self.writer.records_audio:
            self.writer.add_audio(event.index, event.clip.samples, event.first_tick, event.last_tick)

    def _drain(self) -> None:
        if not self._closed:
            self._closed = True
            self._unsubscribe()
            self._queue.put(_CLOSE)
            self._thread.join()

    def close(self, result: EpisodeResult | None) -> None:
        """Write everything still queued, then the result (None: cut short), and close the file. Raises
        RecordingError if any write failed; the file is closed either way."""
        self._drain()
        try:
            self._raise_if_failed()
            if result is None:
                self.writer.abandon()
            else:
                self.writer.finish(result.to_json())
        except BaseException:
            with contextlib.suppress(OSError, ValueError, RuntimeError):
                self.writer.abandon()
            raise
