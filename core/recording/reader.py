"""EpisodeReader: reads episode files, including ones cut short by a crash.

Every failure is an EpisodeFileError (core/recording/errors.py) that names the file and the damaged
part: the header attributes and required groups are checked when the file opens, and each later read
(a step's record, one image, the samples) converts what h5py, zlib or json raise on damaged bytes. So
one damaged image costs its step, never the episode (docs/episode-format.md, "Damaged files").
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Generator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, cast

import h5py
import numpy as np

from core.audio.clip import AudioLayout
from core.recording.errors import EpisodeFileError
from core.recording.writer import (
    AUDIO_INDEX_COLUMNS,
    AUDIO_ROW_FRAMES,
    EPISODE_FORMAT,
    EPISODE_FORMAT_VERSION,
    NO_AUDIO,
    SAMPLE_DTYPE,
    SAMPLE_FIELDS,
    SOURCES,
    STEP_NUMBERS,
)

__all__ = ["REQUIRED_PARTS", "EpisodeFileError", "EpisodeReader", "check_episode", "damaged_part"]

# What h5py, zlib, json and numpy raise on damaged bytes or structure (json's errors are ValueErrors).
READ_ERRORS = (OSError, KeyError, ValueError, TypeError, IndexError, AttributeError, RuntimeError, zlib.error)
# Every episode has these from its first step on (the writer creates them up front): without them the
# file is not an episode, whatever its attributes say. /labels is optional (episodes predating it); /samples is
# absent from unjudged episodes (root attribute judged = False: free play with no memory profile).
REQUIRED_PARTS: dict[str, type] = {"steps": h5py.Group, "steps/table": h5py.Dataset,
                                   "steps/record_bytes": h5py.Dataset, "steps/record_index": h5py.Dataset,
                                   "images": h5py.Group, "samples": h5py.Group, "samples/table": h5py.Dataset}
SAMPLE_PARTS = ("samples", "samples/table")
RESTORE = "Restore the file from a backup or record the episode again."


def _reason(exc: BaseException) -> str:
    if isinstance(exc, zlib.error):
        return f"its compressed data fails to decompress ({exc}): the bytes on disk are damaged"
    if isinstance(exc, json.JSONDecodeError | UnicodeDecodeError):
        return f"it is not valid JSON text ({exc}): the bytes on disk are damaged"
    if isinstance(exc, KeyError):
        return f"it is missing or its HDF5 structure is damaged ({exc.args[0] if exc.args else exc})"
    return f"HDF5 cannot read it ({type(exc).__name__}: {exc}): the file is damaged"


@contextmanager
def damaged_part(path: Path, part: str, step_index: int | None = None) -> Generator[None, None, None]:
    """Turn any read error inside the block into an EpisodeFileError naming `part` of `path`."""
    try:
        yield
    except EpisodeFileError:
        raise
    except READ_ERRORS as exc:
        raise EpisodeFileError(path, part, f"cannot be read: {_reason(exc)}", step_index) from exc


def _whole_number(value: object) -> int | None:
    if isinstance(value, np.ndarray):
        array = cast("np.ndarray", value)  # isinstance leaves its dtype unknown
        if array.shape == ():
            value = array[()]
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        return None
    return int(cast("int | np.integer[Any]", value))


def _lookup(file: h5py.File, name: str) -> object:
    if name not in file:
        return None
    return file[name]


def open_hdf5(path: Path) -> h5py.File:
    """The file opened read-only, or an EpisodeFileError that says why not."""
    if not path.exists():
        raise EpisodeFileError(path, "file", "does not exist")
    if not path.is_file():
        raise EpisodeFileError(path, "file", "is a folder or a device, not an episode file")
    try:
        return h5py.File(path, "r")
    except PermissionError as exc:
        raise EpisodeFileError(path, "file", f"cannot be opened for reading ({exc.strerror}); check its "
                               "permissions") from None
    except OSError as exc:
        raise EpisodeFileError(path, "file", f"cannot open it as HDF5 ({exc}): it is truncated or corrupt, not an "
                               "HDF5 file, or still being written by another process. " + RESTORE) from None


def check_episode(path: Path, file: h5py.File) -> int:
    """Check the format marker, the format version and the required groups; return the version.

    Shared by the reader and the label store, so nothing reads or labels a file that is not an episode.
    """
    with damaged_part(path, "format attribute"):
        marker = file.attrs.get("format")
        marker = marker.decode(errors="replace") if isinstance(marker, bytes) else marker
    if marker != EPISODE_FORMAT:
        found = "is missing" if marker is None else f"is {marker!r}"
        raise EpisodeFileError(path, "format attribute", f"{found}, so this is not a PokeGym episode file (episodes "
                               f"have format={EPISODE_FORMAT!r})")
    with damaged_part(path, "format_version attribute"):
        raw = file.attrs.get("format_version")
    version = _whole_number(raw)
    if version is None or version < 1:
        shown: object = cast("np.ndarray | np.generic[Any]", raw).tolist() if isinstance(raw, np.ndarray | np.generic) \
            else raw
        raise EpisodeFileError(path, "format_version attribute", f"is {shown!r}, not a valid episode format version "
                               "(a whole number from 1): the header is damaged or the file was not written by "
                               "PokeGym Studio. " + RESTORE)
    if version > EPISODE_FORMAT_VERSION:
        raise EpisodeFileError(path, "format_version attribute", f"says episode format version {version}; this "
                               f"PokeGym Studio reads up to {EPISODE_FORMAT_VERSION}: update PokeGym Studio to open it")
    unjudged = file_is_unjudged(path, file)
    for name, kind in REQUIRED_PARTS.items():
        if unjudged and name in SAMPLE_PARTS:
            continue
        with damaged_part(path, f"/{name}"):
            # Not file.get: it would call a present but damaged object "missing".
            item = _lookup(file, name)
        if not isinstance(item, kind):
            found = "is missing" if item is None else f"is a {type(item).__name__}, not a {kind.__name__}"
            raise EpisodeFileError(path, f"/{name}", f"{found}: the file is damaged or was not written by PokeGym "
                                   "Studio. " + RESTORE)
    return version


def file_is_unjudged(path: Path, file: h5py.File) -> bool:
    """Whether the file says it is unjudged (root attribute judged = False): then it has no /samples. Files
    written before the attribute are all judged."""
    with damaged_part(path, "judged attribute"):
        value = file.attrs.get("judged")
    return value is not None and not bool(value)


def _read_image(dataset: h5py.Dataset, index: int) -> np.ndarray:
    """One image. Images are stored one per gzip chunk: read the chunk's bytes and inflate them with
    zlib, which releases the GIL (h5py's own filter holds it), so a reader thread does not stall the
    GUI thread. Anything else (another filter, a chunk not yet written) goes through h5py."""
    shape = dataset.shape[1:]
    if dataset.compression == "gzip" and not dataset.shuffle and dataset.chunks == (1, *shape) \
            and 0 <= index < dataset.shape[0]:
        try:
            mask, raw = dataset.id.read_direct_chunk((index, *(0,) * len(shape)))
        except (KeyError, OSError, ValueError, RuntimeError):  # chunk never written: h5py gives the fill value
            return dataset[index]
        if mask == 0:
            return np.frombuffer(zlib.decompress(raw), dataset.dtype).reshape(shape)
    return dataset[index]


class EpisodeReader:
    """Read-only access to one episode file. Every method raises only EpisodeFileError."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._file = open_hdf5(self.path)
        try:
            self.format_version = check_episode(self.path, self._file)
            with self._part("metadata_json attribute"):
                metadata = json.loads(self._file.attrs["metadata_json"])
            if not isinstance(metadata, dict):
                raise EpisodeFileError(self.path, "metadata_json attribute", "is not a JSON object: the header is "
                                       "damaged. " + RESTORE)
            self.metadata = cast("dict[str, Any]", metadata)
            self.judged = not file_is_unjudged(self.path, self._file)
        except EpisodeFileError:
            self._file.close()
            raise

    def _part(self, part: str, step_index: int | None = None) -> AbstractContextManager[None]:
        return damaged_part(self.path, part, step_index)

    @property
    def step_count(self) -> int:
        # A crash can leave datasets of one step at different lengths; count only complete steps.
        with self._part("/steps and /images (their lengths)"):
            steps = self._file["steps"]
            lengths = [steps["table"].shape[0], steps["record_index"].shape[0]]
            if "images_given" in steps:  # written last for a step: a step without its mark is incomplete
                lengths.append(steps["images_given"].shape[0])
            lengths += [dataset.shape[0] for dataset in self._file["images"].values()]
            return min(lengths)

    @property
    def result(self) -> dict[str, Any] | None:
        with self._part("/result (its result_json attribute)"):
            if "result" not in self._file:
                return None
            result = json.loads(self._file["result"].attrs["result_json"])
        if not isinstance(result, dict):
            raise EpisodeFileError(self.path, "/result (its result_json attribute)", "is not a JSON object: the file "
                                   "is damaged")
        return cast("dict[str, Any]", result)

    @property
    def complete(self) -> bool:
        return self.result is not None

    def step_numbers(self) -> dict[str, np.ndarray]:
        with self._part("/steps/table"):
            table = self._file["steps"]["table"][:self.step_count]
            return {name: table[name] for name, _ in STEP_NUMBERS}

    def _check_index(self, step: int, length: int) -> None:
        if not 0 <= step < length:  # a caller's mistake, not damage: say so plainly
            raise IndexError(f"step position {step} is outside the {length} steps of {self.path}")

    def record(self, step: int) -> dict[str, Any]:
        """The JSON record of the step at position `step` (0-based)."""
        part = f"/steps/record_bytes at step {step + 1}"
        with self._part(part, step):
            steps = self._file["steps"]
            length = steps["record_index"].shape[0]
        self._check_index(step, length)
        with self._part(part, step):
            offset, size = steps["record_index"][step]
            record = json.loads(steps["record_bytes"][offset:offset + size].tobytes())
            if not isinstance(record, dict):
                raise ValueError("the step's record is not a JSON object")
            record["source"] = SOURCES[int(steps["table"][step]["source"])]
            return cast("dict[str, Any]", record)

    def records(self) -> list[dict[str, Any]]:
        return [self.record(i) for i in range(self.step_count)]

    def image(self, name: str, step: int) -> np.ndarray:
        """One image set's image at position `step` (0-based)."""
        part = f"/images/{name} at step {step + 1}"
        with self._part(part, step):
            dataset = self._file["images"][name]
            length = dataset.shape[0]
        self._check_index(step, length)
        with self._part(part, step):
            return _read_image(dataset, step)

    def step_image(self, name: str, step: int) -> np.ndarray | None:
        """The image set's image at position `step` (0-based), or None when that step had none (no previous
        frame at step 1, a human or intervention step). A black image is a frame like any other."""
        image = self.image(name, step)
        given = self._image_given(name, step)
        if given is None:  # written before /steps/images_given: infer, as those files' readers did (docs)
            given = bool(image.any())
        return image if given else None

    @property
    def marks_missing_images(self) -> bool:
        """Whether the file says which steps had no image (/steps/images_given). Files written before that mark
        do not: for them an all-zero image is read as "none", which also hides a genuinely black frame."""
        with self._part("/steps/images_given"):
            return "images_given" in self._file["steps"]

    def _image_given(self, name: str, step: int) -> bool | None:
        """The file's mark for this image at this step, or None where it has none (an older file)."""
        with self._part(f"/steps/images_given at step {step + 1}", step):
            steps = self._file["steps"]
            if "images_given" not in steps:
                return None
            marks = steps["images_given"]
            names = [n.decode() if isinstance(n, bytes) else str(n) for n in marks.attrs["image_sets"]]
            if name not in names or step >= marks.shape[0]:
                return None
            return bool(marks[step, names.index(name)])

    def image_shape(self, name: str) -> tuple[int, ...]:
        with self._part(f"/images/{name}"):
            return tuple(self._file["images"][name].shape[1:])

    def image_sets(self) -> list[str]:
        with self._part("/images"):
            return list(self._file["images"])

    def frame_ticks(self) -> np.ndarray:
        """Ticks of the continuous frames (empty when the episode recorded none)."""
        with self._part("/frames"):
            if "frames" not in self._file:
                return np.zeros(0, np.int64)
            frames = self._file["frames"]
            return frames["tick"][:min(frames["tick"].shape[0], frames["pixels"].shape[0])]

    def frame(self, index: int) -> np.ndarray:
        with self._part(f"/frames/pixels at frame {index}"):
            return _read_image(self._file["frames"]["pixels"], index)

    def sample_table(self) -> np.ndarray:
        """/samples/table as it is stored (a structured array, fields SAMPLE_FIELDS); empty for an unjudged
        episode, which has no samples."""
        if not self.judged:
            return np.zeros(0, SAMPLE_DTYPE)
        with self._part("/samples/table"):
            return self._file["samples"]["table"][:]

    def samples(self) -> dict[str, np.ndarray]:
        table = self.sample_table()
        return {name: table[name] for name, _ in SAMPLE_FIELDS}

    # -- sound (/audio: docs/episode-format.md) ----------------------------------------------
    def audio_layout(self) -> AudioLayout | None:
        """The recorded sound's rate and channels, or None: the file has no /audio (recorded without sound, or
        before sound was recorded)."""
        with self._part("/audio"):
            if "audio" not in self._file:
                return None
            group = self._file["audio"]
            rate, channels = _whole_number(group.attrs["rate"]), _whole_number(group.attrs["channels"])
            pcm, index = group["pcm"], group["steps"]
            row_frames = pcm.shape[1]
            pcm_channels, columns = pcm.shape[2], index.shape[1]
        if rate is None or rate <= 0 or channels is None or channels <= 0 or channels != pcm_channels \
                or row_frames != AUDIO_ROW_FRAMES or columns != len(AUDIO_INDEX_COLUMNS):
            raise EpisodeFileError(self.path, "/audio", f"has rate {rate}, {channels} channels, rows of {row_frames} "
                                   f"frames and {columns} index columns, which do not fit together: the file is "
                                   "damaged or was not written by PokeGym Studio. The steps, images and samples "
                                   "still read.")
        return AudioLayout(rate, channels)

    def audio_index(self) -> np.ndarray:
        """/audio/steps as stored, (steps with sound written, 4): first_row, frames (NO_AUDIO: none), first_tick,
        last_tick; empty without /audio."""
        with self._part("/audio/steps"):
            if "audio" not in self._file:
                return np.zeros((0, len(AUDIO_INDEX_COLUMNS)), np.int64)
            return np.asarray(self._file["audio"]["steps"][:], np.int64).reshape(-1, len(AUDIO_INDEX_COLUMNS))

    def step_audio(self, index: int) -> np.ndarray | None:
        """The sound of the step at position `index` (0-based): int16 (frames, channels) covering its ticks
        (audio_index), or None where the step has none (a file without /audio, a step whose sound was not kept,
        or not written before the file was cut short). Damaged sound raises EpisodeFileError whose problem
        begins "damaged audio at step N", for that step only."""
        if self.audio_layout() is None:
            return None
        part = f"/audio/pcm at step {index + 1}"
        with self._audio_damage(part, index):
            group = self._file["audio"]
            steps = group["steps"]
            if not 0 <= index < steps.shape[0]:
                return None
            first_row, frames, _, _ = (int(v) for v in steps[index])
            if frames == NO_AUDIO:
                return None
            pcm = group["pcm"]
            rows = -(-frames // AUDIO_ROW_FRAMES)
            if frames < 0 or first_row < 0 or first_row + rows > pcm.shape[0]:
                raise ValueError(f"its index (row {first_row}, {frames} frames) points outside the {pcm.shape[0]} "
                                 "stored rows")
            if rows == 0:
                return np.zeros((0, pcm.shape[2]), np.int16)
            data = np.asarray(pcm[first_row:first_row + rows], np.int16)
            return data.reshape(-1, pcm.shape[2])[:frames]

    @contextmanager
    def _audio_damage(self, part: str, index: int) -> Generator[None, None, None]:
        try:
            yield
        except READ_ERRORS as exc:
            raise EpisodeFileError(self.path, part, f"damaged audio at step {index + 1}: {_reason(exc)}. The step's "
                                   "picture, record and every other step's sound still read.", index) from exc

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> EpisodeReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
