"""EpisodeReader: reads episode files, including ones cut short by a crash."""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from core.recording.writer import EPISODE_FORMAT, EPISODE_FORMAT_VERSION, SAMPLE_FIELDS, SOURCES, STEP_NUMBERS


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


class EpisodeFileError(ValueError):
    """Not an episode file, or one from a newer format."""


class EpisodeReader:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        try:
            self._file = h5py.File(self.path, "r")
        except OSError as exc:
            raise EpisodeFileError(f"cannot open {self.path} as HDF5: {exc}") from None
        attrs = self._file.attrs
        if attrs.get("format") != EPISODE_FORMAT:
            self._file.close()
            raise EpisodeFileError(f"{self.path} is not a PokeGym episode file")
        version = int(attrs.get("format_version", 0))
        if version > EPISODE_FORMAT_VERSION:
            self._file.close()
            raise EpisodeFileError(f"{self.path} uses episode format {version}; this version of PokeGym Studio "
                                   f"reads up to {EPISODE_FORMAT_VERSION}: update PokeGym Studio to open it")
        if version < 1:
            self._file.close()
            raise EpisodeFileError(f"{self.path} has no valid episode format version ({version}); it was not "
                                   "written by PokeGym Studio or its header is damaged")
        self.metadata: dict[str, Any] = json.loads(attrs["metadata_json"])

    @property
    def step_count(self) -> int:
        # A crash can leave datasets of one step at different lengths; count only complete steps.
        steps = self._file["steps"]
        lengths = [steps["table"].shape[0], steps["record_index"].shape[0]]
        lengths += [dataset.shape[0] for dataset in self._file["images"].values()]
        return min(lengths)

    @property
    def result(self) -> dict[str, Any] | None:
        if "result" not in self._file:
            return None
        return json.loads(self._file["result"].attrs["result_json"])

    @property
    def complete(self) -> bool:
        return self.result is not None

    def step_numbers(self) -> dict[str, np.ndarray]:
        table = self._file["steps"]["table"][:self.step_count]
        return {name: table[name] for name, _ in STEP_NUMBERS}

    def record(self, step: int) -> dict[str, Any]:
        offset, length = self._file["steps"]["record_index"][step]
        raw = self._file["steps"]["record_bytes"][offset:offset + length]
        record = json.loads(raw.tobytes())
        record["source"] = SOURCES[int(self._file["steps"]["table"][step]["source"])]
        return record

    def records(self) -> list[dict[str, Any]]:
        return [self.record(i) for i in range(self.step_count)]

    def image(self, name: str, step: int) -> np.ndarray:
        return _read_image(self._file["images"][name], step)

    def image_sets(self) -> list[str]:
        return list(self._file["images"])

    def frame_ticks(self) -> np.ndarray:
        """Ticks of the continuous frames (empty when the episode recorded none)."""
        if "frames" not in self._file:
            return np.zeros(0, np.int64)
        frames = self._file["frames"]
        return frames["tick"][:min(frames["tick"].shape[0], frames["pixels"].shape[0])]

    def frame(self, index: int) -> np.ndarray:
        return _read_image(self._file["frames"]["pixels"], index)

    def samples(self) -> dict[str, np.ndarray]:
        table = self._file["samples"]["table"][:]
        return {name: table[name] for name, _ in SAMPLE_FIELDS}

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> EpisodeReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
