"""Pointer chains that survive restarts: found in one process, kept only if they resolve in fresh ones.

In each fresh process the position is found again by the motion finder (there is no signature
to go by: that is why pointers are being tried), and a chain survives only if it lands exactly
on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.finder.motion import Drivable, GameLauncher, Progress
from core.finder.pointers import PointerChain, keep_resolving, reverse_scan
from core.finder.position import FinderOptions, PositionFinder
from core.memory.readers import open_reader


@dataclass
class PointerReport:
    found: list[PointerChain]
    surviving: list[PointerChain]
    pids: list[int]
    vertical: int = 2
    values: tuple[float, float, float] = (0.0, 0.0, 0.0)
    per_process: list[int] = field(default_factory=list[int])  # chains still standing after each fresh process

    def provenance(self) -> str:
        return (f"Pointer chain from a reverse pointer scan in process {self.pids[0]}: {len(self.found)} chain(s) "
                f"found, {len(self.surviving)} resolved to the position in {len(self.pids) - 1} fresh process(es) "
                f"(pids {', '.join(map(str, self.pids[1:]))}).")

    def to_json(self) -> dict[str, object]:
        return {"found": len(self.found), "surviving": [c.describe() for c in self.surviving],
                "chains": [c.to_profile() for c in self.surviving], "pids": self.pids,
                "left_after_each_process": self.per_process}


def _locate(game: Drivable, options: FinderOptions, progress: Progress | None
            ) -> tuple[int, int, tuple[float, float, float]]:
    finder = PositionFinder(game, options=options)
    try:
        best = finder.run(progress).candidates[0]
    finally:
        finder.close()
    return best.address, best.vertical, best.values


def search(launcher: GameLauncher, options: FinderOptions, fresh: int = 2, depth: int = 4,
           max_offset: int = 0x1000, progress: Progress | None = None) -> PointerReport:
    game = launcher()
    try:
        address, vertical, values = _locate(game, options, progress)
        reader = open_reader(game.pid)
        try:
            if progress is not None:
                progress("reverse pointer scan", 0.0, 0)
            found = reverse_scan(reader, address, depth, max_offset, region_filter=options.region_filter)
        finally:
            reader.close()
        report = PointerReport(found, list(found), [game.pid], vertical, values)
    finally:
        game.close()
    for _ in range(fresh):
        if not report.surviving:
            break
        game = launcher()
        try:
            address, _, _ = _locate(game, options, progress)
            reader = open_reader(game.pid)
            try:
                report.surviving = keep_resolving(report.surviving, reader, address)
            finally:
                reader.close()
            report.pids.append(game.pid)
            report.per_process.append(len(report.surviving))
        finally:
            game.close()
    return report
