"""A run folder (`python main.py run --out FOLDER`): what is a result, what is an error, what runs again.

* results.jsonl: one line per episode that ended as a result (success or budget, or unjudged: free play on
  a game with no memory profile, which is neither a success nor a failure), appended as it ends.
* errors.jsonl: one line per episode that ended in an infrastructure error (the game or the evaluator
  died, the model API failed for good). These are not results: `report` counts them apart, and running
  the same command again retries them.
* episodes/KEY.h5: one recording per episode; an interrupted or failed try is replaced by the next.

Interrupted episodes (Ctrl+C) are in neither file. Format: docs/run-folder.md.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, cast

from core.session.free_play import UNJUDGED

RESULTS = "results.jsonl"
ERRORS = "errors.jsonl"
EPISODES = "episodes"
ERROR = "error"  # the end_reason of an infrastructure error
TASK_ERROR = "task_error"  # the end_reason of a broken task (its success holds at its start): no result, no retry


class RunFolderError(ValueError):
    """The output folder cannot be used; the message says why in one line."""


def is_error(row: dict[str, Any]) -> bool:
    """An infrastructure error or a broken task: not a result (results.jsonl written before errors.jsonl existed
    held them)."""
    return row.get("end_reason") in (ERROR, TASK_ERROR)


def is_unjudged(row: dict[str, Any]) -> bool:
    """Free play that nothing judged (no memory profile): a result, but never a success or a failure."""
    return row.get("end_reason") == UNJUDGED


def read_rows(path: Path) -> tuple[list[dict[str, Any]], list[int]]:
    """The JSON objects of a .jsonl file, and the numbers of the lines that are not (a crash mid-write)."""
    numbered, bad = read_numbered_rows(path)
    return [row for _, row in numbered], bad


def read_numbered_rows(path: Path) -> tuple[list[tuple[int, dict[str, Any]]], list[int]]:
    """As read_rows, each object with its line number (1-based). Raises OSError or UnicodeDecodeError
    when the file exists but cannot be read."""
    if not path.is_file():
        return [], []
    rows: list[tuple[int, dict[str, Any]]] = []
    bad: list[int] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            row = None
        if isinstance(row, dict):
            rows.append((number, cast("dict[str, Any]", row)))  # a JSON object
        else:
            bad.append(number)
    return rows, bad


def finished_keys(folder: Path) -> set[str]:
    """The episodes that have a result; every other episode of a run is (re)run on resume."""
    rows, _ = read_rows(folder / RESULTS)
    return {row["key"] for row in rows if "key" in row and not is_error(row)}


def unresolved_errors(folder: Path, results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The last error of each episode that has no result (yet): what a resume would retry."""
    resolved = {row.get("key") for row in results if not is_error(row)}
    errors, _ = read_rows(folder / ERRORS)
    latest: dict[str, dict[str, Any]] = {}
    for index, row in enumerate([r for r in results if is_error(r)] + errors):
        key = str(row.get("key") or f"#{index}")  # a row without a key stands alone
        if key not in resolved:
            latest[key] = row
    return list(latest.values())


def prepare(out: Path) -> None:
    """Create the output folder (and episodes/) and check that files can be written there.

    Raises RunFolderError with a one-line reason; a folder this call created is removed again on failure.
    """
    if out.exists() and not out.is_dir():
        raise RunFolderError(f"--out {out} is a file; give a folder (it is created if missing)")
    created = not out.exists()
    try:
        (out / EPISODES).mkdir(parents=True, exist_ok=True)
        for name in (RESULTS, ERRORS):
            if (out / name).exists() and not os.access(out / name, os.W_OK):
                raise PermissionError(f"{out / name} is read-only")
        with tempfile.TemporaryFile(dir=out / EPISODES):
            pass  # can we write here at all (a read-only mount, a folder of someone else's)?
    except OSError as exc:
        if created:
            _remove_empty(out)
        reason = exc.strerror or str(exc)
        raise RunFolderError(f"cannot write results into {out}: {reason}; choose a folder you can write to") from None


def _remove_empty(out: Path) -> None:
    """Remove the folders `prepare` made, as far as they are empty (never anything with files in it)."""
    for folder in (out / EPISODES, out):
        try:
            folder.rmdir()
        except OSError:
            return
