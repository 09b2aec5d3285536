"""Opening a recording for the Replay view, on its open thread: is the path a PokeGym recording at all
(said plainly before the HDF5 library gives its own error), then the episode and its labels."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import h5py
import numpy as np

from core.episode import load_episode
from core.labels.store import LabelStoreError, read_labels, save_blocker
from core.recording.reader import EpisodeFileError
from studio.unexpected import unexpected
from widgets.trajectory_plot import thin_path


def not_a_recording(path: Path) -> str | None:
    """Why `path` cannot be a recording (missing, a folder, not HDF5), or None when it may be one."""
    path = Path(path)
    if not path.exists():
        return f"{path} does not exist"
    if path.is_dir():
        return None  # a folder of episodes
    try:
        hdf5 = h5py.is_hdf5(str(path))
    except OSError as exc:
        return f"cannot open {path}: {exc.strerror or exc}"
    if not hdf5:
        return (f"cannot open {path}: {path.name} is not a PokeGym recording (it is not an HDF5 file; "
                "recordings are the .h5 files the studio and `python main.py run` write)")
    return None


def load_for_view(path: Path) -> tuple[tuple[Any, Any, np.ndarray, str] | None, str]:
    """((the episode, its labels or the LabelStoreError reading them, its path thinned for the map, why
    labels cannot be saved into it or ""), "") or (None, why it cannot open). Never raises: anything
    unforeseen in a file is reported, and the file is left unchanged."""
    problem = not_a_recording(path)
    if problem is not None:
        return None, problem
    try:
        episode = load_episode(path)
        if len(episode) == 0:
            raise EpisodeFileError(path, "/steps", "holds no complete step; there is nothing to replay")
        try:
            labels: Any = read_labels(path)
        except LabelStoreError as exc:
            labels = exc
        blocker = save_blocker(path) or ""  # opens the file: here, not on the GUI thread
    except EpisodeFileError as exc:
        return None, str(exc)
    except Exception as exc:  # noqa: BLE001 - anything unforeseen in a file must reach the user, not kill the thread
        return None, f"{unexpected(f'opening {path}', exc)}. The file was opened read-only and left unchanged."
    return (episode, labels, thin_path(episode.path_xy), blocker), ""
