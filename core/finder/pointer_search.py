"""Pointer chains that survive restarts: found in one process, kept only if they resolve in fresh ones.

In each fresh process the position is found again by the motion finder (there is no signature
to go by: that is why pointers are being tried), and a chain survives only if it lands exactly
on it. Static roots come first: copies of the value in a module's static data, read with no
pointer at all (`chain: []`), confirmed in the first process by walking (a copy that stays put
while the position moves is a constant that merely held the same value).

The report always ends with what to try next (`next_steps`), whatever the outcome.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.finder.motion import Drivable, GameLauncher, MotionPlan, Progress
from core.finder.pointers import TRIPLE, PointerChain, keep_resolving, reverse_scan, static_copies
from core.finder.position import FinderOptions, PositionFinder
from core.finder.ranking import RankedTriple
from core.game.pad import PadState
from core.memory.readers import MemoryReader, open_reader


@dataclass
class PointerReport:
    found: list[PointerChain]
    surviving: list[PointerChain]
    pids: list[int]
    vertical: int = 2
    values: tuple[float, float, float] = (0.0, 0.0, 0.0)
    per_process: list[int] = field(default_factory=list[int])  # chains still standing after each fresh process
    static_roots: int = 0        # of `found`, roots with no pointer (they come first)
    depth: int = 4
    max_offset: int = 0x1000
    right_turn: float | None = None  # the found position's (core/finder/ranking.py), for the profile's ground_turn

    def provenance(self) -> str:
        return (f"Pointer chain from a reverse pointer scan in process {self.pids[0]}: {len(self.found)} chain(s) "
                f"found ({self.static_roots} static, with no pointer), {len(self.surviving)} resolved to the "
                f"position in {len(self.pids) - 1} fresh process(es) (pids {', '.join(map(str, self.pids[1:]))}).")

    def next_steps(self, game: str = "GAME", out: str | None = None) -> list[str]:
        """What to try next, as command lines and advice: there is always something."""
        if self.surviving:
            if out is not None:
                return [f"check it on more restarts: python main.py memory verify --profile {out} --backend {game} "
                        "--restarts 3",
                        "then over a long walk: python main.py tasks validate TASK.yaml --profile " + out]
            return [f"write a profile with the first chain: python main.py memory pointers --backend {game} "
                    "--out PROFILE.yaml, then `memory verify` it"]
        steps: list[str] = []
        if self.found:
            steps.append(f"none of {len(self.found)} chain(s) survived a restart: the objects on the way are "
                         "allocated differently in each run")
        steps += [f"search deeper and wider: python main.py memory pointers --backend {game} "
                  f"--depth {self.depth + 1} --max-offset {self.max_offset * 2:#x}",
                  f"or a signature from more processes: python main.py memory signature --backend {game} "
                  "--processes 3 --out PROFILE.yaml",
                  "or find a value shown on screen first (find-position --typed) to make sure the position found is "
                  "the game's own copy"]
        return steps

    def to_json(self, game: str = "GAME", out: str | None = None) -> dict[str, object]:
        return {"found": len(self.found), "static_roots": self.static_roots,
                "surviving": [c.describe() for c in self.surviving],
                "chains": [c.to_profile() for c in self.surviving], "pids": self.pids,
                "left_after_each_process": self.per_process, "next": self.next_steps(game, out)}


def _locate(game: Drivable, options: FinderOptions, progress: Progress | None) -> RankedTriple:
    finder = PositionFinder(game, options=options)
    try:
        return finder.run(progress).candidates[0]
    finally:
        finder.close()


def following_roots(game: Drivable, reader: MemoryReader, address: int, plan: MotionPlan) -> list[PointerChain]:
    """Static copies of the value at `address` that still hold it after a walk forward (and the walk back)."""
    roots = static_copies(reader, address)
    if not roots:
        return []
    before = reader.read(address, TRIPLE)
    game.hold(PadState(left_y=1.0), plan.move_seconds)
    game.hold(PadState(), plan.settle_seconds)
    try:
        if reader.read(address, TRIPLE) == before:
            return []  # the walk moved nothing: no copy can be told from a constant
        return keep_resolving(roots, reader, address)
    finally:
        game.hold(PadState(left_y=-1.0), plan.move_seconds)
        game.hold(PadState(), plan.settle_seconds)


def search(launcher: GameLauncher, options: FinderOptions, fresh: int = 2, depth: int = 4,
           max_offset: int = 0x1000, progress: Progress | None = None) -> PointerReport:
    game = launcher()
    try:
        best = _locate(game, options, progress)
        address = best.address
        reader = open_reader(game.pid)
        try:
            if progress is not None:
                progress("static copies of the position", 0.0, 0)
            roots = following_roots(game, reader, address, options.plan)
            if progress is not None:
                progress("reverse pointer scan", 0.0, 0)
            chains = reverse_scan(reader, address, depth, max_offset, region_filter=options.region_filter)
        finally:
            reader.close()
        found = roots + [c for c in chains if c not in roots]
        report = PointerReport(found, list(found), [game.pid], best.vertical, best.values, static_roots=len(roots),
                               depth=depth, max_offset=max_offset, right_turn=best.right_turn)
    finally:
        game.close()
    for _ in range(fresh):
        if not report.surviving:
            break
        game = launcher()
        try:
            address = _locate(game, options, progress).address
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
