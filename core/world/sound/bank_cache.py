"""The sound banks, kept on disk between start-ups: synthesizing them is about a third of a world's start-up CPU.

A cached file is named by what the banks are made from, so it is used only for exactly that: the world file's
content (its whole validated spec, which holds the sample rate and the seed), the source of the modules that
synthesize them (any edit to them is a new version), and numpy's version (its generators and FFTs make the
samples). The banks are the same bits either way: loading them gives the very arrays build_banks gave when the
file was written.

One .npz file (arrays only, read with allow_pickle=False) per world and version in the user's cache folder
(core.paths.user_cache_dir()/sound-banks). It is written to a temporary file in the same folder and renamed
into place, so a world starting meanwhile sees either no file or a whole one; worlds starting together may
each build and write the banks, which are the same. A file that cannot be read, fails its zip CRCs, or does
not hold what this world's banks must hold is rebuilt (and a warning logged), never trusted. Writing is best
effort: a cache folder that cannot be written only costs the time to build the banks.
"""

from __future__ import annotations

import glob
import hashlib
import logging
import os
import re
import tempfile
import zipfile
from pathlib import Path
from types import ModuleType
from typing import BinaryIO

import numpy as np

from core import paths
from core.world import sound_spec
from core.world.content import WorldSpec
from core.world.sound import ambience, banks, cues, dsp, impacts, voice
from core.world.sound.banks import Banks, build_banks

log = logging.getLogger(__name__)

FOLDER = "sound-banks"
# The modules whose code decides the banks' samples; their source is part of the cache key.
SYNTHESIS_MODULES: tuple[ModuleType, ...] = (banks, dsp, ambience, cues, impacts, voice, sound_spec)
KEY_ARRAY = "__key__"
_GROUPS = ("footsteps", "bumps", "voices")  # lists of sounds per name
_SINGLES = ("cues", "loops", "strokes")  # one sound per name


class CacheMismatch(ValueError):
    """A cache file that reads, but is not the banks this world needs."""


def cache_key(spec: WorldSpec) -> str:
    digest = hashlib.sha256()
    digest.update(spec.model_dump_json().encode())
    for module in SYNTHESIS_MODULES:
        assert module.__file__ is not None
        digest.update(Path(module.__file__).read_bytes())
    digest.update(f"numpy {np.__version__} rate {spec.sound.rate}".encode())
    return digest.hexdigest()[:32]


def cache_path(spec: WorldSpec, key: str) -> Path:
    name = re.sub(r"[^A-Za-z0-9_-]+", "_", spec.name)[:40] or "world"
    return paths.user_cache_dir() / FOLDER / f"{name}-{spec.sound.rate}-{key}.npz"


def cached_banks(spec: WorldSpec) -> Banks:
    """This world's sound banks: from the cache where it holds them whole, else built (and cached)."""
    key = cache_key(spec)
    path = cache_path(spec, key)
    try:
        return _read(path, key, spec.sound.rate)
    except FileNotFoundError:  # not made yet (or just pruned by a start-up of another version of this world)
        pass
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:  # CacheMismatch is a ValueError
        log.warning("sound bank cache %s is damaged or does not match (%s): rebuilding it", path, exc)
    built = build_banks(spec)
    _write(path, key, built)
    return built


def _arrays(built: Banks) -> dict[str, np.ndarray]:
    arrays: dict[str, np.ndarray] = {}
    for group in _GROUPS:
        for name, sounds in getattr(built, group).items():
            for index, sound in enumerate(sounds):
                arrays[f"{group}/{name}/{index}"] = sound
    for group in _SINGLES:
        for name, sound in getattr(built, group).items():
            arrays[f"{group}/{name}"] = sound
    return arrays


def _read(path: Path, key: str, rate: int) -> Banks:
    # opened here: np.load leaves a file it opened itself open when it is not a zip file at all
    with path.open("rb") as file:
        stored = np.load(file, allow_pickle=False)
        if not isinstance(stored, np.lib.npyio.NpzFile):
            raise CacheMismatch("not an .npz file")
        with stored:
            # every member is read whole, so zipfile checks each one's CRC
            arrays: dict[str, np.ndarray] = {name: stored[name] for name in stored.files}
    stored_key = arrays.pop(KEY_ARRAY, None)
    if stored_key is None or stored_key.shape != () or str(stored_key) != key:
        raise CacheMismatch("written for other banks")
    loaded = Banks(rate)
    for name, array in arrays.items():
        if array.dtype != np.float32 or array.ndim != 1:
            raise CacheMismatch(f"{name} is not a float32 signal")
        parts = name.split("/")
        if len(parts) == 3 and parts[0] in _GROUPS:
            group: dict[str, list[np.ndarray]] = getattr(loaded, parts[0])
            group.setdefault(parts[1], []).append(array)
            if not parts[2].isdigit() or int(parts[2]) != len(group[parts[1]]) - 1:
                raise CacheMismatch(f"{name} is out of order")
        elif len(parts) == 2 and parts[0] in _SINGLES:
            single: dict[str, np.ndarray] = getattr(loaded, parts[0])
            single[parts[1]] = array
        else:
            raise CacheMismatch(f"unexpected member {name}")
    return loaded


def _write(path: Path, key: str, built: Banks) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=path.stem + ".", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        log.warning("could not write the sound bank cache %s: %s", path, exc)
        return
    try:
        with os.fdopen(handle, "wb") as file:
            _save_npz(file, {KEY_ARRAY: np.array(key), **_arrays(built)})
        os.replace(temporary, path)  # atomic: readers see no file or this whole one
    except OSError as exc:
        log.warning("could not write the sound bank cache %s: %s", path, exc)
        Path(temporary).unlink(missing_ok=True)
        return
    _prune(path)


def _save_npz(file: BinaryIO, arrays: dict[str, np.ndarray]) -> None:
    """What np.savez writes (a zip of .npy members, read by np.load), each member written with allow_pickle=False
    (numpy 1.26's savez takes no such flag: it would store it as one more array)."""
    with zipfile.ZipFile(file, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, array in arrays.items():
            with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(array), allow_pickle=False)


def _prune(kept: Path) -> None:
    """Remove this world's banks of other versions (older code or world file): only the newest is used."""
    prefix = kept.name.rsplit("-", 1)[0] + "-"
    for other in kept.parent.glob(f"{glob.escape(prefix)}*.npz"):
        if other != kept:
            other.unlink(missing_ok=True)

