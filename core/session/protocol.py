"""Named run protocols: settings fixed so that runs by different people are the same benchmark.

`paper` is the benchmark's own protocol: the built-in suite's tasks (the 30 named by assets/tasks/_suite.yaml,
each exactly as published), every instruction granularity, 5 trials, each task's own step budget. A run under
a protocol may not set any of those itself, not even to the value the protocol uses, so that a command line
says unambiguously what was run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.evaluation.tasks import SuiteError, check_suite
from core.paths import TASKS_DIR

SUITE_SELECTOR = "suite"  # select_tasks: the built-in suite's tasks, checked against its manifest
RUN_DEFAULTS: dict[str, Any] = {"tasks": "all", "granularity": "goal", "trials": 1, "budget": None}


@dataclass(frozen=True)
class RunProtocol:
    name: str
    tasks: str
    granularity: str
    trials: int
    budget: int | None  # None: each task's own step budget

    def settings(self) -> dict[str, Any]:
        return {"tasks": self.tasks, "granularity": self.granularity, "trials": self.trials, "budget": self.budget}


PROTOCOLS = {"paper": RunProtocol("paper", SUITE_SELECTOR, "all", 5, None)}


class ProtocolError(ValueError):
    """A run that sets what its protocol fixes, or a suite that is not the published one."""


def run_settings(protocol: str | None, given: Mapping[str, Any]) -> dict[str, Any]:
    """The run's tasks, granularity, trials and budget: the protocol's, or what was given over the defaults.
    `given` holds only what the user set (None for what was left out). Raises ProtocolError."""
    chosen = {name: value for name, value in given.items() if value is not None}
    if protocol is None:
        return {**RUN_DEFAULTS, **chosen}
    fixed = PROTOCOLS[protocol]
    if chosen:
        flags = ", ".join(f"--{name}" for name in chosen)
        raise ProtocolError(f"--protocol {protocol} fixes the tasks, granularities, trials and budgets; leave out "
                            f"{flags} (or drop --protocol to choose them yourself)")
    return fixed.settings()


def suite_ids(folder: Path = TASKS_DIR) -> tuple[list[str], str]:
    """The built-in suite's task ids, and a note for the user when the folder holds other tasks too. Raises
    ProtocolError when a suite task is missing or not the published version."""
    try:
        check = check_suite(folder)
    except SuiteError as exc:
        raise ProtocolError(str(exc)) from None
    if not check.intact:
        problems = [f"{task_id} is missing" for task_id in check.missing]
        problems += [f"{task_id} was changed" for task_id in check.changed]
        raise ProtocolError(f"the built-in suite is not the published one ({'; '.join(problems)}): restore the "
                            "files (git checkout assets/tasks), or run without --protocol")
    note = ""
    if check.others:
        note = (f"{len(check.others)} other task file(s) in {folder} are not part of the suite and are not run: "
                f"{', '.join(check.others)}")
    return list(check.suite), note
