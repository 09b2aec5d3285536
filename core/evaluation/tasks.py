"""Task files (assets/tasks/*.yaml): schema, strict validation with file and line, and loading.

See docs/task-format.md.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, cast

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from core.evaluation.conditions import AllOf, AnyOf, Condition, Reach, ReachSpec, Sequence, flags_named
from core.paths import TASKS_DIR
from core.yaml_file import explain, field_name, parse_yaml

TASK_FORMAT_VERSION = 1
Category = Literal["navigation", "interaction", "mixed"]
GRANULARITIES = ("visual_guided", "step_guided", "goal_only")


class TaskFileError(ValueError):
    """A task file that cannot be used; the message names the file and line. `problems` holds the same
    as (field, problem) pairs, e.g. ("instructions.visual_guided", "Field required"), for a form to mark."""

    def __init__(self, message: str, problems: list[tuple[str, str]] | None = None) -> None:
        super().__init__(message)
        self.problems = problems or []


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Instructions(_Model):
    visual_guided: str = Field(min_length=10, description="names visual anchors along the way")
    step_guided: str = Field(min_length=10, description="ordered sub-goals, no visual cues")
    goal_only: str = Field(min_length=5, description="the objective alone")


class Goto(_Model):
    goto: tuple[float, float]


class InteractSpec(_Model):
    target: tuple[float, float]
    approach: tuple[float, float] | None = None
    presses: int = Field(default=12, ge=1, le=40)


class Interact(_Model):
    interact: InteractSpec


RouteStep = Goto | Interact


class InlineStart(_Model):
    """A start state written into the task itself (captured in the studio), rather than named.

    Mirrors the world's StartState (core/world/content.py), which core.evaluation must not import;
    the world validates it again when it is reset to it.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    pos: tuple[float, float]
    facing: float = 0.0
    camera_yaw: float | None = None
    camera_pitch: float = -12.0
    flags: list[str] = []

    @field_validator("flags")
    @classmethod
    def _known_flags(cls, flags: list[str], info: ValidationInfo) -> list[str]:
        if len(set(flags)) != len(flags):
            raise ValueError("flag names must be unique")
        # The profile's flag names arrive through the validation context (parse_task's known_flags), so the
        # error is reported with the file and line like any other field error.
        context: dict[str, Any] = info.context or {}
        known: list[str] | None = context.get("known_flags")
        unknown = sorted(set(flags) - set(known)) if known is not None else []
        if unknown:
            raise ValueError(f"unknown flags {unknown}; the game profile defines {list(known or [])}")
        return flags

    def to_reset(self) -> dict[str, Any]:
        """The plain JSON mapping a GameConnection.reset takes (and a recording's metadata stores)."""
        return self.model_dump(mode="json", exclude_none=True)


def _start_kind(value: Any) -> str | None:
    if isinstance(value, str):
        return "Name"
    return "InlineStart" if isinstance(value, (dict, InlineStart)) else None


# Tagged by the value's shape, so an error reports only the form the author meant; the tags are
# capitalised so parse_task leaves them out of the field path, as it does for union members.
StartSpec = Annotated[
    Annotated[str, Tag("Name")] | Annotated[InlineStart, Tag("InlineStart")],
    Discriminator(_start_kind, custom_error_type="start_state",
                  custom_error_message="must be a start state name or a mapping {pos: [x, y], facing, camera_yaw, "
                                       "camera_pitch, flags}"),
]


class Task(_Model):
    format_version: Literal[1] = 1
    # Which game the task is for: a backend name (assets/backends/ or the user's POKEGYM_HOME/backends/), or
    # a backend file's path relative to the task file. The project's tasks of other backends live in
    # assets/tasks/BACKEND/.
    backend: str = Field(default="builtin", pattern=r"^([a-z0-9_]+|.+\.ya?ml)$")
    id: str = Field(pattern=r"^[a-z0-9_]+$")
    quest: str = Field(pattern=r"^[a-z0-9_]+$")
    category: Category
    title: str
    start_state: StartSpec = Field(description="a start state name of the world, or an inline start state")
    step_budget: int = Field(ge=1, le=2000)
    instructions: Instructions
    success: Condition
    reference_route: list[RouteStep] = []
    reference_steps: int | None = Field(default=None, ge=1, description="steps the scripted driver took")

    def instruction(self, granularity: str) -> str:
        if granularity not in GRANULARITIES:
            raise ValueError(f"granularity must be one of {GRANULARITIES}, got {granularity!r}")
        return str(getattr(self.instructions, granularity))

    def start_for_reset(self) -> str | dict[str, Any]:
        """What GameConnection.reset takes: the name, or the inline start as a plain JSON mapping."""
        return self.start_state if isinstance(self.start_state, str) else self.start_state.to_reset()

    def start_pose(self, named_starts: Mapping[str, Mapping[str, Any]]) -> dict[str, Any] | None:
        """Where the start state puts the character, as a reset mapping ({pos, facing, ...}): written inline, or
        named in `named_starts` (the world file's start states: core/authoring/context.world_start_states);
        None for a name the mapping does not hold (another game's start state)."""
        if not isinstance(self.start_state, str):
            return self.start_state.to_reset()
        pose = named_starts.get(self.start_state)
        return dict(pose) if pose is not None else None

    def start_position(self, named_starts: Mapping[str, Mapping[str, Any]]) -> tuple[float, float] | None:
        """The (x, y) of start_pose, or None."""
        pose = self.start_pose(named_starts)
        return (float(pose["pos"][0]), float(pose["pos"][1])) if pose is not None else None

    def route_points(self) -> list[tuple[float, float]]:
        """Each reference-route step's point: a waypoint, or an interaction's target."""
        return [route_point(step) for step in self.reference_route]

    def goal_point(self) -> tuple[float, float, bool] | None:
        """Where the task ends, and whether that is an interaction target: the target of a reference route that
        ends in an interaction, else the centre of the condition's last reach, else the route's last waypoint."""
        route = self.reference_route
        if route and isinstance(route[-1], Interact):
            x, y = route[-1].interact.target
            return float(x), float(y), True
        reach = _last_reach(self.success)
        if reach is not None:
            return reach.x, reach.y, False
        if route and isinstance(route[-1], Goto):
            return float(route[-1].goto[0]), float(route[-1].goto[1]), False
        return None


def route_point(step: RouteStep) -> tuple[float, float]:
    """Where a reference-route step goes: its waypoint, or the target it interacts with."""
    x, y = step.goto if isinstance(step, Goto) else step.interact.target
    return float(x), float(y)


def _last_reach(condition: Condition) -> ReachSpec | None:
    if isinstance(condition, Reach):
        return condition.reach
    children = (condition.sequence if isinstance(condition, Sequence) else condition.all_of
                if isinstance(condition, AllOf) else condition.any_of if isinstance(condition, AnyOf) else [])
    for child in reversed(children):
        found = _last_reach(child)
        if found is not None:
            return found
    return None


def parse_task(text: str, path: Path, known_flags: list[str] | None = None,
               start_states: list[str] | None = None) -> Task:
    try:
        data, root = parse_yaml(text, path)
    except ValueError as exc:
        raise TaskFileError(str(exc)) from None
    if not isinstance(data, dict):
        raise TaskFileError(f"{path}:1: a task file holds one mapping (id, quest, category, ...)")
    try:
        task = Task.model_validate(data, context={"known_flags": known_flags})
    except ValidationError as exc:
        fields = [(field_name(tuple(error["loc"])), str(error["msg"])) for error in exc.errors()]
        raise TaskFileError(explain(path, root, exc, f"task (format {TASK_FORMAT_VERSION})", Task), fields) from None
    problems: list[str] = []
    fields: list[tuple[str, str]] = []
    if known_flags is not None:
        unknown = flags_named(task.success) - set(known_flags)
        if unknown:
            problems.append(f"success names unknown flags {sorted(unknown)}")
            fields.append(("success", f"unknown flags {sorted(unknown)}"))
    if start_states is not None and isinstance(task.start_state, str) and task.start_state not in start_states:
        problems.append(f"start_state {task.start_state!r} is not one of {start_states}")
        fields.append(("start_state", f"{task.start_state!r} is not one of {start_states}"))
    if task.id != path.stem:
        problems.append(f"id {task.id!r} must match the file name {path.stem!r}")
        fields.append(("id", f"must match the file name {path.stem!r}"))
    if problems:
        raise TaskFileError(f"{path}: " + "; ".join(problems), fields)
    return task


def load_task(path: Path, known_flags: list[str] | None = None, start_states: list[str] | None = None) -> Task:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise TaskFileError(f"cannot read task file {path}: {exc.strerror}") from None
    return parse_task(text, Path(path), known_flags, start_states)


def suite_folder(backend: str = "builtin") -> Path:
    """Where a backend's tasks live: assets/tasks/ for the built-in world, assets/tasks/BACKEND/ for others."""
    return TASKS_DIR if backend == "builtin" else TASKS_DIR / backend


def task_files(folder: Path = TASKS_DIR) -> list[Path]:
    return sorted(p for p in folder.glob("*.yaml") if not p.name.startswith("_"))


def load_suite(folder: Path = TASKS_DIR, known_flags: list[str] | None = None,
               start_states: list[str] | None = None) -> list[Task]:
    return [load_task(p, known_flags, start_states) for p in task_files(folder)]


# -- the benchmark suite ------------------------------------------------------------------------
SUITE_MANIFEST = TASKS_DIR / "_suite.yaml"  # a leading _: no task loader reads it as a task


class SuiteError(ValueError):
    """The suite manifest is missing or damaged, or a suite task is not the one it names."""


def task_digest(path: Path) -> str:
    """The digest the suite manifest records for a task file (its bytes, so any edit shows)."""
    return "sha256:" + hashlib.sha256(Path(path).read_bytes()).hexdigest()


def read_suite_manifest(path: Path = SUITE_MANIFEST) -> dict[str, str]:
    """The built-in suite: task id -> the digest of its file (assets/tasks/_suite.yaml, docs/task-format.md)."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise SuiteError(f"cannot read the suite manifest {path}: {exc}; restore it (git checkout {path})") from None
    tasks: object = cast("dict[str, Any]", data).get("tasks") if isinstance(data, dict) else None
    if not isinstance(tasks, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                               for k, v in cast("dict[object, object]", tasks).items()):
        raise SuiteError(f"{path} is not a suite manifest (a mapping `tasks: {{id: sha256:...}}`); restore it "
                         f"(git checkout {path})")
    return dict(cast("dict[str, str]", tasks))  # checked above


@dataclass(frozen=True)
class SuiteCheck:
    """How a folder's task files stand against the suite manifest."""

    suite: tuple[str, ...]     # the manifest's task ids, in its order
    missing: tuple[str, ...]   # suite tasks with no file
    changed: tuple[str, ...]   # suite tasks whose file is not the version the manifest records
    others: tuple[str, ...]    # task files in the folder that are not part of the suite

    @property
    def intact(self) -> bool:
        return not self.missing and not self.changed


def check_suite(folder: Path = TASKS_DIR, manifest: Path = SUITE_MANIFEST) -> SuiteCheck:
    suite = read_suite_manifest(manifest)
    present = {p.stem: p for p in task_files(folder)}
    missing = tuple(task_id for task_id in suite if task_id not in present)
    changed = tuple(task_id for task_id, digest in suite.items()
                    if task_id in present and task_digest(present[task_id]) != digest)
    others = tuple(sorted(set(present) - set(suite)))
    return SuiteCheck(tuple(suite), missing, changed, others)


def write_suite_manifest(task_ids: list[str], folder: Path = TASKS_DIR, manifest: Path = SUITE_MANIFEST) -> None:
    """Record `task_ids` (files in `folder`) as the suite, with their digests as they are now."""
    lines = ["# The built-in benchmark suite: the tasks `run --protocol paper` runs, each with the digest of the",
             "# file it was published with (docs/task-format.md#the-suite). After changing a suite task on purpose,",
             "# rewrite this file: python main.py tasks suite --write", f"format_version: {TASK_FORMAT_VERSION}",
             "tasks:"]
    lines += [f"  {task_id}: {task_digest(folder / f'{task_id}.yaml')}" for task_id in sorted(task_ids)]
    Path(manifest).write_text("\n".join(lines) + "\n", encoding="utf-8")
