"""When no signature can be unique: the signature builder's own fall-back to the pointer search.

The value may live in copies of one struct that nothing around tells apart (core/finder/copies.py),
or in a struct that differs between runs. The pointer search (core/finder/pointer_search.py) then
runs by itself, static roots first, and the best surviving root is written as a pointer profile
and verified on fresh processes through the evaluator's own code, like a signature.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from core.finder.motion import GameLauncher, Progress
from core.finder.pointer_search import PointerReport, search
from core.finder.position import FinderOptions
from core.finder.profile_writer import ProfileDraft, build, validate
from core.finder.verify import VerifyResult, verify_profile


@dataclass
class Fallback:
    ok: bool
    message: str
    report: PointerReport
    profile_data: dict[str, Any] | None = None
    draft: ProfileDraft | None = None
    verifications: list[VerifyResult] = field(default_factory=list[VerifyResult])


def to_pointers(launcher: GameLauncher, finder: FinderOptions, draft: ProfileDraft, verify: int,
                expected_speed: float | None, progress: Progress | None = None,
                expected_right_turn: float | None = None) -> Fallback:
    """Search pointer roots (static ones first), write the best surviving one into `draft` (its signature and
    flags dropped), and verify it on `verify` fresh processes."""
    report = search(launcher, finder, fresh=max(1, verify), progress=progress)
    if not report.surviving:
        return Fallback(False, f"the pointer search found {len(report.found)} root(s), none surviving a restart",
                        report)
    root = report.surviving[0]
    pointer_draft = replace(draft, pick=None, flags=None, pointer=root.to_profile(), vertical=report.vertical,
                            observed=report.values, provenance=[*draft.provenance, report.provenance()])
    data = build(pointer_draft)
    profile = validate(data)
    checks: list[VerifyResult] = []
    for index in range(verify):
        if progress is not None:
            progress(f"verifying the pointer root on fresh process {index + 1}", index / max(1, verify), 0)
        game = launcher()
        try:
            check = verify_profile(game, profile, finder.plan, expected_speed=expected_speed,
                                   expected_right_turn=expected_right_turn)
        finally:
            game.close()
        checks.append(check)
        if not check.ok:
            return Fallback(False, f"the pointer root {root.describe()} failed on a fresh process: {check.message}",
                            report, verifications=checks)
    pointer_draft.provenance.append(f"Verified on {verify} fresh process(es): {checks[-1].message}.")
    return Fallback(True, f"pointer root {root.describe()} verified on {verify} fresh process(es)", report,
                    build(pointer_draft), pointer_draft, checks)
