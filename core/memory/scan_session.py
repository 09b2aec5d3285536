"""A value scan kept in a folder between command-line calls (`memory scan`, then `memory next`).

    FOLDER/session.json   settings, the target's pid and start time, the scans so far
    FOLDER/chunks.npz     the chunk table (address, slots)
    FOLDER/<gen>.npz      per generation and chunk: count, and where each array lies
    FOLDER/*.bin          the arrays themselves (spill files, core/memory/spill.py)

Only JSON and numpy arrays are read back (np.load with allow_pickle=False): nothing is ever
unpickled. A session refuses a process that is not the one it was made on (pids are reused:
the process start time must match too).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import numpy as np

from core.memory.chunks import Chunk
from core.memory.readers import MemoryReader
from core.memory.scanner import RegionFilter
from core.memory.spill import SpillFile, Stored
from core.memory.values import Condition, value_type
from core.memory.valuescan import ChunkState, Generation, ValueScan

SESSION_FORMAT = 1
_KINDS = ("snapshot", "pages", "mask", "slots", "values")


class SessionError(ValueError):
    """A session folder that cannot be used; the message says why and what to do."""


def process_start_time(pid: int) -> int | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def save(scan: ValueScan, folder: Path, history: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    kept = scan.generations
    names = {id(g): f"gen-{g.number}-{i}" for i, g in enumerate(kept)}
    files: dict[int, SpillFile] = {}
    ram = SpillFile(folder / f"ram-{len(list(folder.glob('ram-*.bin')))}-{id(scan)}.bin")
    ram.keep = True
    for generation in kept:
        for state in generation.states:
            for kind in _KINDS:
                stored = getattr(state, kind)
                if stored is not None and stored.array is not None:  # held in memory: write it out
                    setattr(state, kind, ram.append(stored.array, to_disk=True))
    for generation in kept:
        table: dict[str, np.ndarray] = {"count": np.array([s.count for s in generation.states], np.int64)}
        for kind in _KINDS:
            index: list[int] = []
            offset: list[int] = []
            count: list[int] = []
            for state in generation.states:
                stored: Stored | None = getattr(state, kind)
                if stored is None:
                    index.append(-1)
                    offset.append(0)
                    count.append(0)
                    continue
                files.setdefault(id(stored.file), stored.file)
                index.append(list(files).index(id(stored.file)))
                offset.append(stored.offset)
                count.append(stored.count)
            table[f"{kind}_file"] = np.array(index, np.int32)
            table[f"{kind}_offset"] = np.array(offset, np.int64)
            table[f"{kind}_count"] = np.array(count, np.int64)
        generation.spill.keep = True
        np.savez(folder / f"{names[id(generation)]}.npz", **cast("dict[str, Any]", table))  # no allow_pickle key
    for spill in files.values():
        spill.keep = True
    np.savez(folder / "chunks.npz", address=np.array([c.address for c in scan.chunks], np.uint64),
             nslots=np.array([c.nslots for c in scan.chunks], np.int64))
    region_filter = scan.region_filter
    data: dict[str, Any] = {
        "format": SESSION_FORMAT, "pid": scan.reader.pid, "started": process_start_time(scan.reader.pid),
        "type": scan.vtype.name, "aligned": scan.aligned,
        "region_filter": {"perms": region_filter.perms, "path_contains": region_filter.path_contains,
                          "min_size": region_filter.min_size, "max_size": region_filter.max_size},
        "files": [Path(f.path).name for f in files.values()],
        "generations": {role: names[id(g)] if g is not None else None
                        for role, g in (("first", scan.first), ("previous", scan.previous), ("current", scan.current))},
        "conditions": {names[id(g)]: _condition_json(g.condition) for g in kept},
        "history": history,
    }
    temporary = folder / "session.json.tmp"
    temporary.write_text(json.dumps(data, indent=1))
    temporary.replace(folder / "session.json")
    referenced = {*data["files"], "session.json", "chunks.npz", *(f"{n}.npz" for n in names.values())}
    for path in folder.iterdir():  # scans no longer reachable (neither first, previous nor current)
        if path.name not in referenced and path.suffix in (".bin", ".npz"):
            path.unlink(missing_ok=True)


def load(folder: Path, reader_for: Any) -> tuple[ValueScan, list[str]]:
    """The saved scan, attached to its process through `reader_for(pid) -> MemoryReader`."""
    try:
        data = json.loads((folder / "session.json").read_text())
    except FileNotFoundError:
        raise SessionError(f"{folder} holds no scan session: start one with `memory scan --session {folder} "
                           "--pid PID ...`") from None
    except (OSError, ValueError) as exc:
        raise SessionError(f"cannot read the scan session in {folder}: {exc}") from None
    if data.get("format") != SESSION_FORMAT:
        raise SessionError(f"{folder} holds a session of format {data.get('format')!r}, not {SESSION_FORMAT}")
    pid = int(data["pid"])
    started = process_start_time(pid)
    if started is None:
        raise SessionError(f"process {pid}, which this session scanned, has exited: start a new scan")
    if data.get("started") is not None and started != data["started"]:
        raise SessionError(f"process {pid} is not the one this session scanned (the pid was reused): start a new "
                           "scan")
    reader: MemoryReader = reader_for(pid)
    rf = data["region_filter"]
    scan = ValueScan(reader, value_type(data["type"]), aligned=bool(data["aligned"]),
                     region_filter=RegionFilter(rf["perms"], rf["path_contains"], rf["min_size"], rf["max_size"]),
                     workspace=folder)
    with np.load(folder / "chunks.npz", allow_pickle=False) as chunks:
        step = scan.step
        scan.chunks = [Chunk(int(a), int(n), step, scan.vtype.size)
                       for a, n in zip(chunks["address"].tolist(), chunks["nslots"].tolist())]
    files = [SpillFile(folder / name, create=False) for name in data["files"]]
    loaded: dict[str, Generation] = {}
    for name, condition in data["conditions"].items():
        with np.load(folder / f"{name}.npz", allow_pickle=False) as table:
            states: list[ChunkState] = []
            for i, count in enumerate(table["count"].tolist()):
                state = ChunkState(int(count))
                for kind in _KINDS:
                    index = int(table[f"{kind}_file"][i])
                    if index >= 0:
                        dtype = scan.vtype.dtype.str if kind == "values" else ("<u4" if kind == "slots" else "|u1")
                        setattr(state, kind, Stored(files[index], int(table[f"{kind}_offset"][i]),
                                                    int(table[f"{kind}_count"][i]), dtype))
                states.append(state)
        number = int(name.split("-")[1])
        loaded[name] = Generation(number, Condition(**condition), states, files[0] if files else
                                  SpillFile(folder / f"{name}.bin"))
    roles = data["generations"]
    scan.first = loaded.get(roles["first"]) if roles["first"] else None
    scan.previous = loaded.get(roles["previous"]) if roles["previous"] else None
    scan.current = loaded.get(roles["current"]) if roles["current"] else None
    return scan, list(data.get("history", []))


def _condition_json(condition: Condition) -> dict[str, Any]:
    return {"op": condition.op, "value": condition.value, "upper": condition.upper,
            "tolerance": condition.tolerance, "against_first": condition.against_first}
