"""AudioFeeder: a thread of its own that takes the sound a view plays and hands it to the speaker.

Every FEED_MS the thread pulls what its source has new (Live: the game's audio ring, studio/live_audio.py;
Replay: a recorded stretch, ClipSource), turns it into spectrogram columns and levels for the sound pane
(pulled by the GUI on a timer: latest-wins, never signalled), and writes it to a QtMultimedia `QAudioSink`
(push mode) as fast as the sink accepts it. The GUI thread never touches the sink or the sound: it sets the
source, the volume and mute, and reads what was made. The sink lives and dies on this thread, inside a Qt
event loop of its own.

Every feeder still running when Python exits is stopped first (`_close_running`, an atexit hook registered
after PySide's own): PySide's exit deletes every Qt object Python owns, and a feeder thread still delivering
its timer's events then crashed the process (a segfault in QApplicationPrivate::notify_helper), e.g. when the
studio's X server went away and it exited without closing its window.

A live source's sound is never allowed to pile up: what waits for the sink is kept under MAX_BACKLOG_S (the
oldest dropped), so a game running faster than real time (a lockstep world driven as fast as it runs)
costs the gaps, never the latency. Each accepted chunk's latency is measured: from the moment its ticks
were first seen in the ring to the moment the sink accepted its last byte, plus what the sink still held
before it (its buffered duration). `latencies_ms` keeps the recent figures (bench live reports them).

Where the machine has no audio output (CI, a server, Xvfb without a sound server) there is no sink:
`problem` says "no audio output", and the columns and levels are made all the same.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
import weakref
from collections import deque
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from PySide6.QtCore import QEventLoop, QIODevice, Qt, QTimer
from PySide6.QtMultimedia import QAudioFormat, QAudioSink, QMediaDevices, QtAudio

from core.audio.columns import ColumnMaker, Levels, levels
from studio.unexpected import unexpected

log = logging.getLogger("studio.sound")
FEED_MS = 5
SINK_BUFFER_S = 0.06       # what the sink itself holds: enough to ride over a busy moment of this thread
MAX_BACKLOG_S = 0.3        # live sound waiting for the sink, at most (a lockstep step's 0.25 s plays whole)
STEADY_BACKLOG_S = 0.03    # live sound that has waited this long all through CATCH_UP_S is cut back to it
CATCH_UP_S = 0.5           # (a stall of the sound server leaves a backlog real-time sound would never drain)
KEEP_COLUMNS_S = 4.0       # spectrogram columns kept for a pane that has not pulled them yet
NO_OUTPUT = "no audio output"


@dataclass
class Chunk:
    """Some sound to play: int16 PCM (frames, channels), and when it became available (time.monotonic())."""

    pcm: np.ndarray
    arrived: float = field(default_factory=time.monotonic)


class SoundSource(Protocol):
    """What a feeder plays. Called on the feeder thread only."""

    @property
    def live(self) -> bool:
        """A live source's backlog is capped (MAX_BACKLOG_S); a recording's plays whole."""
        ...

    def audio_format(self) -> tuple[int, int] | None:
        """(rate, channels) of what it gives now, or None: nothing to play (yet)."""
        ...

    def pull(self) -> list[Chunk]:
        """The sound new since the last pull (in order); [] when there is none."""
        ...


class ClipSource:
    """A recorded stretch, given whole on the first pull (Replay: from the cursor at 1×, or one step's snippet)."""

    live = False

    def __init__(self, rate: int, pcm: np.ndarray) -> None:
        self.rate = rate
        self.pcm = pcm.reshape(len(pcm), -1)
        self._given = False

    def audio_format(self) -> tuple[int, int] | None:
        return self.rate, int(self.pcm.shape[1])

    def pull(self) -> list[Chunk]:
        if self._given:
            return []
        self._given = True
        return [Chunk(self.pcm)]


def audio_output_problem() -> str | None:
    """NO_OUTPUT where Qt finds no audio output device (call on the GUI thread, once a QApplication exists)."""
    return None if QMediaDevices.audioOutputs() else NO_OUTPUT


_running: weakref.WeakSet[AudioFeeder] = weakref.WeakSet()


def _close_running() -> None:
    for feeder in list(_running):
        feeder.close()


# Registered after PySide6.QtCore's import above, so it runs before PySide's own exit clean-up (atexit is LIFO).
atexit.register(_close_running)


class AudioFeeder:
    """One view's speaker: `set_source` to play, `set_volume`/`set_muted`; the pane pulls `take_columns()` and
    `levels`. `spectrum` False: no columns are made (Replay draws them from the recording itself)."""

    def __init__(self, name: str, spectrum: bool = True, with_output: bool = True) -> None:
        self.name = name
        self.spectrum = spectrum
        self.problem: str | None = None if with_output else NO_OUTPUT
        self.volume = 1.0
        self.muted = False
        self.levels: Levels | None = None  # of the newest sound pulled (latest-wins)
        self.latencies_ms: deque[float] = deque(maxlen=2000)
        self.played_frames = 0  # frames the sink accepted (tests and bench: the speaker really played)
        self.dropped_frames = 0  # live frames dropped to keep the latency bounded
        self._columns: deque[np.ndarray] = deque()
        self._column_count = 0
        self._lock = threading.Lock()
        self._source: SoundSource | None = None
        self._source_changed = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._with_output = with_output

    # -- the GUI thread's side ------------------------------------------------------------------
    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=f"studio-audio-{self.name}", daemon=True)
            self._thread.start()
            _running.add(self)

    def set_source(self, source: SoundSource | None) -> None:
        """Play this from now on (None: silence); what the sink still held of the previous one is dropped."""
        with self._lock:
            self._source, self._source_changed = source, True

    def set_volume(self, volume: float) -> None:
        self.volume = max(0.0, min(1.0, volume))

    def set_muted(self, muted: bool) -> None:
        self.muted = muted

    def take_columns(self) -> np.ndarray | None:
        """The spectrogram columns made since the last call, (channels, rows, columns) uint8, or None."""
        with self._lock:
            if not self._columns:
                return None
            columns = np.concatenate(list(self._columns), axis=2)
            self._columns.clear()
            self._column_count = 0
        return columns

    def close(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                return  # still stopping: kept in _running, so that exit waits for it again
            self._thread = None
        _running.discard(self)

    # -- the feeder thread -------------------------------------------------------------------------
    def _run(self) -> None:
        loop = QEventLoop()
        timer = QTimer()
        timer.setTimerType(Qt.TimerType.PreciseTimer)
        state = _FeedState()
        timer.timeout.connect(lambda: self._feed(loop, state))
        timer.start(FEED_MS)
        try:
            loop.exec()
        finally:
            timer.stop()
            state.close_sink()

    def _feed(self, loop: QEventLoop, state: _FeedState) -> None:
        if self._stop.is_set():
            loop.quit()
            return
        try:
            self._feed_once(state)
        except Exception as exc:  # noqa: BLE001 - logged with its traceback; the next poll goes on with new sound
            failure = f"{type(exc).__name__}: {exc}"
            if failure != state.failure:  # once per distinct failure, not every 5 ms while it lasts
                unexpected(f"the {self.name} sound feeder (it goes on with the next sound)", exc)
            state.failure = failure
            state.pending.clear()
        else:
            state.failure = None  # recovered: a later failure is logged again

    def _feed_once(self, state: _FeedState) -> None:
        with self._lock:
            source, changed = self._source, self._source_changed
            self._source_changed = False
        if changed:
            state.pending.clear()
            state.drop_buffered()
            state.maker = None
        if source is None:
            return
        fmt = source.audio_format()
        if fmt is None:
            return
        if state.fmt != fmt:
            state.fmt = fmt
            state.maker = None
            if self._with_output and self.problem is None:
                self.problem = state.open_sink(*fmt)
        if state.maker is None and self.spectrum:
            state.maker = ColumnMaker(*fmt)
        for chunk in source.pull():
            self._heard(state, chunk)
            if not self.muted and state.sink is not None:
                state.pending.append(chunk)
        if self.muted:
            state.pending.clear()
        if source.live:
            self.dropped_frames += state.cap_backlog(MAX_BACKLOG_S) + state.catch_up(STEADY_BACKLOG_S, CATCH_UP_S)
        if state.sink is not None:
            state.apply_volume(self.volume)
            self.played_frames += state.write(self.latencies_ms)

    def _heard(self, state: _FeedState, chunk: Chunk) -> None:
        self.levels = levels(chunk.pcm)
        if state.maker is None:
            return
        columns = state.maker.feed(chunk.pcm)
        if columns.shape[2]:
            with self._lock:
                self._columns.append(columns)
                self._column_count += columns.shape[2]
                keep = int(KEEP_COLUMNS_S * state.maker.columns_per_second)
                while self._column_count - self._columns[0].shape[2] >= keep:
                    self._column_count -= self._columns.popleft().shape[2]


class _FeedState:
    """What only the feeder thread touches: the sink, its device, the sound waiting for it."""

    def __init__(self) -> None:
        self.fmt: tuple[int, int] | None = None
        self.sink: QAudioSink | None = None
        self.device: QIODevice | None = None
        self.maker: ColumnMaker | None = None
        self.pending: deque[Chunk] = deque()
        self.offset = 0  # bytes of pending[0] already written
        self.volume = -1.0
        self.failure: str | None = None  # the last poll's unexpected failure, logged once while it repeats
        self.window_start = time.monotonic()  # catch_up's window, and the least that waited in it (frames)
        self.window_least: int | None = None

    @property
    def bytes_per_frame(self) -> int:
        return 2 * self.fmt[1] if self.fmt else 4

    def open_sink(self, rate: int, channels: int) -> str | None:
        self.close_sink()
        device = QMediaDevices.defaultAudioOutput()
        if device.isNull():
            return NO_OUTPUT
        fmt = QAudioFormat()
        fmt.setSampleRate(rate)
        fmt.setChannelCount(channels)
        fmt.setSampleFormat(QAudioFormat.SampleFormat.Int16)
        if not device.isFormatSupported(fmt):
            return f"the audio output {device.description()} cannot play {rate} Hz, {channels} channels"
        self.sink = QAudioSink(device, fmt)
        self.sink.setBufferSize(int(SINK_BUFFER_S * rate) * 2 * channels)
        self.device = self.sink.start()
        self.volume = -1.0
        if self.sink.error() != QtAudio.Error.NoError:  # (QAudio.Error is an older enum: never equal)
            problem = f"the audio output {device.description()} failed to start ({self.sink.error().name})"
            self.close_sink()
            return problem
        log.info("sound plays on %s (%d Hz, %d channels)", device.description(), rate, channels)
        return None

    def close_sink(self) -> None:
        if self.sink is not None:
            self.sink.stop()
            self.sink.deleteLater()
        self.sink, self.device = None, None

    def drop_buffered(self) -> None:
        """Silence what the sink still holds (a new source: a seek in Replay, a restarted game)."""
        self.offset = 0
        if self.sink is not None:
            self.sink.reset()
            self.device = self.sink.start()

    def apply_volume(self, volume: float) -> None:
        if self.sink is not None and volume != self.volume:
            self.sink.setVolume(volume)
            self.volume = volume

    def waiting(self) -> int:
        """Frames waiting for the sink."""
        return sum(len(c.pcm) for c in self.pending) - self.offset // self.bytes_per_frame

    def catch_up(self, seconds: float, window_s: float) -> int:
        """Where at least `seconds` of sound has waited all through the last `window_s` (live sound arrives as fast
        as it plays, so such a backlog never drains), drop the oldest of it down to `seconds`. A lockstep step's
        burst drains between steps, so it is never cut. Returns the frames dropped."""
        if self.fmt is None:
            return 0
        waiting = self.waiting()
        self.window_least = waiting if self.window_least is None else min(self.window_least, waiting)
        now = time.monotonic()
        if now - self.window_start < window_s:
            return 0
        least, self.window_start, self.window_least = self.window_least, now, None
        keep = int(seconds * self.fmt[0])
        return self.cap_backlog((waiting - (least - keep)) / self.fmt[0]) if least > keep else 0

    def cap_backlog(self, seconds: float) -> int:
        """Drop the oldest waiting sound beyond `seconds`; returns the frames dropped."""
        if self.fmt is None:
            return 0
        limit = int(seconds * self.fmt[0])
        waiting = self.waiting()
        dropped = 0
        while waiting > limit and self.pending:
            first = self.pending[0]
            left = len(first.pcm) - self.offset // self.bytes_per_frame
            cut = min(left, waiting - limit)
            if cut == left:
                self.pending.popleft()
                self.offset = 0
            else:
                self.offset += cut * self.bytes_per_frame
            waiting -= cut
            dropped += cut
        return dropped

    def write(self, latencies_ms: deque[float]) -> int:
        """As much waiting sound as the sink accepts; returns the frames written."""
        sink, device = self.sink, self.device
        if sink is None or device is None:
            return 0
        written = 0
        per_frame = self.bytes_per_frame
        while self.pending:
            free = sink.bytesFree()
            if free < per_frame:
                break
            chunk = self.pending[0]
            data = chunk.pcm.tobytes()
            part = data[self.offset:self.offset + free - free % per_frame]
            count = device.write(part)
            if count <= 0:
                break
            self.offset += count
            written += count // per_frame
            if self.offset >= len(data):
                self.pending.popleft()
                self.offset = 0
                # Its last byte is in: it reaches the speaker once what the sink held before it has played.
                held = sink.bufferSize() - sink.bytesFree()
                rate = self.fmt[0] if self.fmt else 1
                latencies_ms.append((time.monotonic() - chunk.arrived) * 1000 + held / per_frame / rate * 1000)
        return written
