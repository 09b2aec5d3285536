"""EpisodeWriter: writes one episode to HDF5 as it happens (schema: docs/episode-format.md).

Every dataset is created up front and the file is flushed after every step, so the file on
disk is complete and consistent after each step: a kill -9 loses at most the step being
written, and plain `h5py.File(path)` opens what is left. (SWMR mode was measured and rejected:
it leaves a "file open for write" flag after a crash that makes plain h5py refuse the file.)
Per-step text goes into one JSON record per step in a growing byte dataset with an offset
index, which keeps every write a fixed-size append.
"""

from __future__ import annotations

import json
import time
import zlib
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from core.audio.clip import AudioLayout
from core.step_sources import SOURCES

EPISODE_FORMAT = "pokegym-episode"
EPISODE_FORMAT_VERSION = 1
SAMPLE_FIELDS = (("time", "f8"), ("tick", "i8"), ("map_id", "u4"), ("x", "f4"), ("y", "f4"), ("z", "f4"),
                 ("facing", "f4"), ("camera_yaw", "f4"), ("camera_pitch", "f4"), ("flags", "u8"),
                 ("dialogue_active", "u1"))
STEP_NUMBERS = (("step", "i4"), ("time", "f8"), ("tick_before", "i8"), ("tick_after", "i8"),
                ("latency_s", "f8"), ("displacement", "f4"), ("ineffective", "u1"), ("source", "u1"))
IMAGE_SETS = ("current", "previous", "left", "right")
STEP_DTYPE = np.dtype(list(STEP_NUMBERS))
SAMPLE_DTYPE = np.dtype(list(SAMPLE_FIELDS))
# /audio (docs/episode-format.md): PCM in rows of AUDIO_ROW_FRAMES frames, one HDF5 chunk each, a step taking as
# many whole rows as it needs (its last one padded with zeros), so no chunk ever holds two steps' sound: damage
# costs one step's sound. 8192 frames is about a third of a second at 24 kHz, 32 KiB raw in stereo.
AUDIO_ROW_FRAMES = 8192
# /audio/steps columns: the step's first row, its frames (NO_AUDIO: none recorded), and the ticks it covers.
AUDIO_INDEX_COLUMNS = ("first_row", "frames", "first_tick", "last_tick")
NO_AUDIO = -1
AUDIO_CHANNEL_LAYOUT = "interleaved int16, frames x channels; 2 channels = left, right"
# Two fixed slots for the studio's labels (layout: docs/labels-format.md, written by core/labels/store.py).
LABEL_SLOTS = 2
LABEL_SLOT_BYTES = 1 << 20


def create_label_slots(labels: h5py.Group) -> h5py.Dataset:
    """Create /labels/slots: contiguous, unfiltered and allocated now, so it has a fixed file offset.

    The label store then overwrites a slot in place with plain pwrite + fsync, never through HDF5,
    which is what keeps a crash during a label save from touching anything else in the file.
    """
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_layout(h5py.h5d.CONTIGUOUS)
    dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)  # the default (late) leaves no offset until a write
    dcpl.set_fill_time(h5py.h5d.FILL_TIME_ALLOC)  # zeros on disk: an empty slot reads as "no labels"
    return labels.create_dataset("slots", (LABEL_SLOTS, LABEL_SLOT_BYTES), dtype="u1", fillvalue=0, dcpl=dcpl)


def _compression() -> dict[str, object]:
    if COMPRESSION is None:
        return {}
    return {"compression": COMPRESSION, "compression_opts": COMPRESSION_LEVEL} if COMPRESSION_LEVEL is not None \
        else {"compression": COMPRESSION}
# Chosen by `bench record` (README): gzip level 1 makes files about a fifth of raw size, against a third
# for lzf, at a similar recording cost, and random seeks stay far under 20 ms.
COMPRESSION: str | None = "gzip"
COMPRESSION_LEVEL: int | None = 1
AUDIO_GZIP_LEVEL = 1  # `bench record` (README): level 6 saves 5% more at twice the time


def audio_chunk_bytes(row: np.ndarray, raw: bool = False) -> bytes:
    """One /audio/pcm chunk as HDF5's shuffle + deflate filters store it: the low bytes of every sample, then the
    high bytes, deflated. Done here because zlib releases the GIL while it compresses (as for the images).
    `raw`: shuffled only (for `bench record`'s comparison of levels)."""
    pairs = np.ascontiguousarray(row, "<i2").view(np.uint8).reshape(-1, 2)
    shuffled = np.ascontiguousarray(pairs.T).tobytes()
    return shuffled if raw else zlib.compress(shuffled, AUDIO_GZIP_LEVEL)


class EpisodeWriter:
    def __init__(self, path: Path, metadata: dict[str, Any], frame_shape: tuple[int, int, int],
                 image_sets: tuple[str, ...] = ("current",), continuous_frames: bool = False,
                 audio: AudioLayout | None = None) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = h5py.File(self.path, "w")
        root = self._file
        root.attrs["format"] = EPISODE_FORMAT
        root.attrs["format_version"] = EPISODE_FORMAT_VERSION
        root.attrs["created"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        root.attrs["metadata_json"] = json.dumps(metadata, sort_keys=True, default=str)
        for key in ("task_id", "quest", "category", "granularity", "agent", "privileged", "unjudged"):
            if key in metadata:
                root.attrs[key] = metadata[key]
        # An unjudged episode (free play, no memory profile) has no evaluator samples: no /samples at all, so
        # nothing can read an empty table as "the character stood still" (docs/episode-format.md).
        self.judged = metadata.get("judged", True) is not False
        root.attrs["judged"] = self.judged
        steps = root.create_group("steps")
        steps.create_dataset("table", (0,), maxshape=(None,), dtype=STEP_DTYPE, chunks=(1024,))
        steps.create_dataset("record_bytes", (0,), maxshape=(None,), dtype="u1", chunks=(65536,))
        steps.create_dataset("record_index", (0, 2), maxshape=(None, 2), dtype="i8", chunks=(1024, 2))
        # Which image sets each step really had: a step without one stores zeros in /images, and black is a
        # valid frame (emulator loading screens), so "none" is marked here, never inferred from the pixels.
        given = steps.create_dataset("images_given", (0, len(image_sets)), maxshape=(None, len(image_sets)),
                                     dtype="u1", chunks=(1024, max(1, len(image_sets))))
        given.attrs["image_sets"] = list(image_sets)
        images = root.create_group("images")
        h, w, c = frame_shape
        for name in image_sets:
            images.create_dataset(name, (0, h, w, c), maxshape=(None, h, w, c), dtype="u1", chunks=(1, h, w, c),
                                  **_compression())
        if continuous_frames:
            frames = root.create_group("frames")
            frames.create_dataset("pixels", (0, h, w, c), maxshape=(None, h, w, c), dtype="u1",
                                  chunks=(1, h, w, c), **_compression())
            frames.create_dataset("tick", (0,), maxshape=(None,), dtype="i8", chunks=(1024,))
        if self.judged:
            samples = root.create_group("samples")
            samples.create_dataset("table", (0,), maxshape=(None,), dtype=SAMPLE_DTYPE, chunks=(4096,))
        create_label_slots(root.create_group("labels"))  # the studio's annotations
        if audio is not None:
            self._create_audio(audio)
        self._audio_rows = 0
        self._image_sets = image_sets
        self._record_end = 0
        self.steps_written = 0
        self._file.flush()

    def _create_audio(self, layout: AudioLayout) -> None:
        group = self._file.create_group("audio")
        group.attrs["rate"] = int(layout.rate)
        group.attrs["channels"] = int(layout.channels)
        group.attrs["layout"] = AUDIO_CHANNEL_LAYOUT
        group.attrs["row_frames"] = AUDIO_ROW_FRAMES
        # gzip (level 1, as the images) after HDF5's byte shuffle, which puts the high bytes together: quiet
        # stretches then compress to little. Lossless; any HDF5 reader decodes it.
        group.create_dataset("pcm", (0, AUDIO_ROW_FRAMES, layout.channels),
                             maxshape=(None, AUDIO_ROW_FRAMES, layout.channels), dtype="<i2",
                             chunks=(1, AUDIO_ROW_FRAMES, layout.channels), compression="gzip",
                             compression_opts=AUDIO_GZIP_LEVEL, shuffle=True)
        index = group.create_dataset("steps", (0, len(AUDIO_INDEX_COLUMNS)),
                                     maxshape=(None, len(AUDIO_INDEX_COLUMNS)), dtype="i8",
                                     chunks=(1024, len(AUDIO_INDEX_COLUMNS)))
        index.attrs["columns"] = list(AUDIO_INDEX_COLUMNS)

    # -- appending --------------------------------------------------------------------------
    @staticmethod
    def _append_image(dataset: h5py.Dataset, image: np.ndarray) -> None:
        """Append one image as one pre-compressed chunk.

        zlib releases the GIL while it compresses, so a recording thread no longer holds up the GUI
        thread for the whole compression as h5py's built-in filter does; the bytes on disk are the
        same deflate stream HDF5's gzip filter reads back.
        """
        start = dataset.shape[0]
        dataset.resize(start + 1, axis=0)
        if dataset.compression == "gzip":
            payload = zlib.compress(np.ascontiguousarray(image, np.uint8).tobytes(), dataset.compression_opts or 1)
            dataset.id.write_direct_chunk((start, 0, 0, 0), payload, filter_mask=0)
        else:
            dataset[start] = image

    @staticmethod
    def _append(dataset: h5py.Dataset, values: np.ndarray) -> None:
        start = dataset.shape[0]
        dataset.resize(start + len(values), axis=0)
        dataset[start:] = values

    def add_samples(self, samples: list[dict[str, Any]]) -> None:
        if not samples:
            return
        if not self.judged:
            raise ValueError("this episode is unjudged (no memory profile): it records no evaluator samples")
        rows = np.array([tuple(s[name] for name, _ in SAMPLE_FIELDS) for s in samples], dtype=SAMPLE_DTYPE)
        self._append(self._file["samples"]["table"], rows)

    def add_frame(self, pixels: np.ndarray, tick: int) -> None:
        frames = self._file["frames"]
        self._append_image(frames["pixels"], pixels)
        self._append(frames["tick"], np.array([tick], "i8"))

    @property
    def records_audio(self) -> bool:
        return "audio" in self._file

    def add_audio(self, index: int, samples: np.ndarray | None, first_tick: int, last_tick: int) -> None:
        """The sound of the step at position `index` (int16 (frames, channels)), or None: the step has none (the
        game no longer held its ticks). Its rows are written before its index row, so a file cut short by a
        kill -9 never indexes sound it does not hold. Steps skipped before `index` are marked as having none."""
        if "audio" not in self._file:
            raise ValueError("this episode file was created without audio (EpisodeWriter(audio=None))")
        group = self._file["audio"]
        pcm, steps = group["pcm"], group["steps"]
        while steps.shape[0] < index:
            self._append(steps, np.array([[self._audio_rows, NO_AUDIO, 0, -1]], "i8"))
        if steps.shape[0] > index:
            raise ValueError(f"the sound of step position {index} was already written")
        if samples is None:
            self._append(steps, np.array([[self._audio_rows, NO_AUDIO, first_tick, last_tick]], "i8"))
            return
        channels = pcm.shape[2]
        if samples.ndim != 2 or samples.shape[1] != channels:
            raise ValueError(f"the sound of step position {index} is shaped {samples.shape}; this file records "
                             f"(frames, {channels})")
        data = np.ascontiguousarray(samples, "<i2")
        rows = -(-len(data) // AUDIO_ROW_FRAMES)
        first_row = self._audio_rows
        pcm.resize(first_row + rows, axis=0)
        for row in range(rows):
            piece = np.zeros((AUDIO_ROW_FRAMES, channels), "<i2")
            chunk = data[row * AUDIO_ROW_FRAMES:(row + 1) * AUDIO_ROW_FRAMES]
            piece[:len(chunk)] = chunk
            pcm.id.write_direct_chunk((first_row + row, 0, 0), audio_chunk_bytes(piece), filter_mask=0)
        self._audio_rows += rows
        self._append(steps, np.array([[first_row, len(data), first_tick, last_tick]], "i8"))

    def add_step(self, numbers: dict[str, Any], record: dict[str, Any], images: dict[str, np.ndarray | None],
                 flush: bool = True) -> None:
        """Append one step and flush: after this returns, the step survives a kill -9. (flush=False: the
        caller flushes, after a batch of steps: core/episode/recorder.py.)"""
        steps = self._file["steps"]
        row = tuple(SOURCES.index(numbers[name]) if name == "source" else numbers[name] for name, _ in STEP_NUMBERS)
        self._append(steps["table"], np.array([row], dtype=STEP_DTYPE))
        payload = np.frombuffer(json.dumps(record, sort_keys=True, default=str).encode(), dtype="u1")
        self._append(steps["record_bytes"], payload)
        self._append(steps["record_index"], np.array([[self._record_end, len(payload)]], "i8"))
        self._record_end += len(payload)
        group = self._file["images"]
        for name in self._image_sets:
            image = images.get(name)
            if image is None:
                image = np.zeros(group[name].shape[1:], np.uint8)  # this step had none: /steps/images_given says so
            self._append_image(group[name], image)
        given = [images.get(name) is not None for name in self._image_sets]
        self._append(steps["images_given"], np.array([given], "u1"))
        self.steps_written += 1
        if flush:
            self._file.flush()

    def flush(self) -> None:
        """Make everything appended so far survive a kill -9."""
        self._file.flush()

    # -- finishing --------------------------------------------------------------------------
    def finish(self, result: dict[str, Any]) -> None:
        """Write the result and close the file."""
        group = self._file.require_group("result")
        group.attrs["result_json"] = json.dumps(result, sort_keys=True, default=str)
        for key in ("success", "steps_used", "end_reason", "failure_category_suggestion"):
            if key in result and result[key] is not None:
                group.attrs[key] = result[key]
        self._file.close()

    def abandon(self) -> None:
        """Close without a result (the reader reports the episode as incomplete)."""
        if self._file.id.valid:
            self._file.flush()
            self._file.close()
