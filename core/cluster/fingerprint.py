"""What a node would run: the project's version, a content hash of every file of the package and of assets/,
and the versions of the libraries that shape results. Results from nodes that differ would not be
comparable, so a cluster run compares every node's fingerprint with the driver's and refuses a mismatch,
saying which node differs and how.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import platform
from dataclasses import dataclass
from pathlib import Path

from core.paths import PROJECT_ROOT

PACKAGES = ("core", "widgets", "studio")
TOP_FILES = ("main.py", "pyproject.toml")
LIBRARIES = ("panda3d", "numpy", "h5py", "ray")
SHOWN_FILES = 4  # differing files named in a message; the rest are counted

# What a difference under assets/ is called, by its first folder.
ASSET_KINDS = {"tasks": "task files", "worlds": "world assets", "profiles": "world assets",
               "backends": "world assets", "prompts": "prompt templates"}


@dataclass(frozen=True)
class Fingerprint:
    version: str
    python: str
    libraries: tuple[tuple[str, str], ...]
    files: tuple[tuple[str, str], ...]  # (path relative to the project, sha256), sorted

    @property
    def digest(self) -> str:
        text = repr((self.version, self.python, self.libraries, self.files))
        return hashlib.sha256(text.encode()).hexdigest()


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _project_files(root: Path) -> list[Path]:
    files = [root / name for name in TOP_FILES if (root / name).is_file()]
    for package in PACKAGES:
        files += sorted(p for p in (root / package).rglob("*.py") if "__pycache__" not in p.parts)
    files += sorted(p for p in (root / "assets").rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return files


def fingerprint(root: Path = PROJECT_ROOT) -> Fingerprint:
    """This machine's fingerprint (about a megabyte of files hashed: milliseconds)."""
    files = tuple((path.relative_to(root).as_posix(), hashlib.sha256(path.read_bytes()).hexdigest())
                  for path in _project_files(root))
    libraries = tuple((name, _version(name)) for name in LIBRARIES)
    return Fingerprint(_version("pokegym-studio"), platform.python_version(), libraries, files)


def _kind(path: str) -> str:
    parts = path.split("/")
    if parts[0] == "assets":
        return ASSET_KINDS.get(parts[1] if len(parts) > 2 else "", "assets")
    return "project code"


def _listed(paths: list[str]) -> str:
    shown = ", ".join(paths[:SHOWN_FILES])
    return shown + (f" and {len(paths) - SHOWN_FILES} more" if len(paths) > SHOWN_FILES else "")


def differences(driver: Fingerprint, node: Fingerprint) -> list[str]:
    """How `node` differs from `driver`, one phrase per kind of difference; empty when they match."""
    found: list[str] = []
    if node.version != driver.version:
        found.append(f"project version {node.version} (the driver has {driver.version})")
    if node.python.rsplit(".", 1)[0] != driver.python.rsplit(".", 1)[0]:
        found.append(f"Python {node.python} (the driver has {driver.python})")
    for (name, theirs), (_, ours) in zip(node.libraries, driver.libraries):
        if theirs != ours:
            found.append(f"{name} {theirs} (the driver has {ours})")
    ours_files, theirs_files = dict(driver.files), dict(node.files)
    by_kind: dict[str, dict[str, list[str]]] = {}
    for path in sorted(set(ours_files) | set(theirs_files)):
        if ours_files.get(path) == theirs_files.get(path):
            continue
        change = ("missing on the node" if path not in theirs_files else
                  "only on the node" if path not in ours_files else "different content")
        by_kind.setdefault(_kind(path), {}).setdefault(change, []).append(path)
    for kind, changes in by_kind.items():
        parts = [f"{_listed(paths)} ({change})" for change, paths in changes.items()]
        found.append(f"{kind} differ: {'; '.join(parts)}")
    return found


def mismatch_message(node_name: str, found: list[str]) -> str:
    return (f"node {node_name} differs from the driver: {'; '.join(found)}. Results from different versions are "
            "not comparable, so the run was refused. Install the driver's exact commit on every node "
            "(`pip install -e '.[ray]'` in the same checkout; docs/cluster.md) and restart Ray there.")
