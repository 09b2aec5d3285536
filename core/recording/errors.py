"""EpisodeFileError: the one error every episode-file reader raises (behaviour: docs/episode-format.md).

Readers turn whatever h5py, zlib or json raise on a damaged file (OSError, KeyError, ValueError,
zlib.error, ...) into this error, so a caller handles one type and the user reads which file is damaged,
which part of it, and what to do. A damaged step image carries its step index, so a viewer can mark that
step and go on with the others.
"""

from __future__ import annotations

from pathlib import Path


class EpisodeFileError(Exception):
    """A file that cannot be read (or labelled) as an episode, or one part of it that cannot.

    `path` is the file; `part` names what is damaged: "file" (not HDF5, truncated, missing),
    "format attribute", "format_version attribute", "metadata_json attribute", "/steps/table",
    "/images/current at step 3", "/labels/slots", ...; `problem` says what is wrong and what to do.
    `step_index` is the 0-based position of the one step whose data is damaged, when only one is.
    """

    def __init__(self, path: Path | str, part: str, problem: str, step_index: int | None = None) -> None:
        self.path = Path(path)
        self.part = part
        self.problem = problem
        self.step_index = step_index
        super().__init__(f"{self.path}: {part}: {problem}")
