"""Is a path a PokeGym recording at all? Said plainly before the HDF5 library gives its own error."""

from __future__ import annotations

from pathlib import Path

import h5py


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
