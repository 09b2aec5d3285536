"""TaskDraft: a task being authored while the user drives the live game. No Qt here.

The studio's authoring panel turns each button into one call ("Record goal here" becomes
`draft.record_goal(evaluator.latest())`) and redraws on `sig_changed`. Every capture reads a
StateSample from the evaluator, because ground truth comes from the game's memory, never from the
game client. `validate()` renders the YAML and parses it with parse_task, the same path that loads
task files, so what validates here is exactly what loads later, and errors carry file:line.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import yaml

from core.authoring.context import profile_flags, world_start_states
from core.evaluation.conditions import AllOf, Condition, Flag, FlagSpec, Reach, ReachSpec
from core.evaluation.conditions import Sequence as SequenceCondition
from core.evaluation.sample import StateSample
from core.evaluation.tasks import GRANULARITIES, Goto, InlineStart, Interact, InteractSpec, RouteStep, Task, parse_task
from core.session.events import EventHook

HEADER = "# PokeGym task, authored in the studio. Format: docs/task-format.md"
DEFAULT_RADIUS_M = 3.0
DEFAULT_BUDGET = 60
# The interaction target is put this far ahead of the character: inside its reach (1.6 m in the
# built-in world), so the scripted driver's nudge toward it keeps the character facing the same way.
INTERACT_AHEAD_M = 1.0
YAML_WIDTH = 110  # the hand-written suite was wrapped at this width; keep new files looking the same
Combine = Literal["all_of", "sequence"]
_TEXT_FIELDS = ("id", "quest", "category", "title", "header")
_NUMBER_FIELDS = ("step_budget", "reference_steps")


class TaskDraft:
    """A mutable task under construction. Attributes are read freely; change them through the methods,
    which announce every change on `sig_changed()` (no arguments)."""

    def __init__(self, flag_names: Sequence[str], start_states: Sequence[str] | None = None) -> None:
        self.flag_names = list(flag_names)  # the profile's flags in bit order
        self.start_states = list(start_states) if start_states is not None else None  # None: not checked
        self.id = ""
        self.quest = ""
        self.category = "navigation"
        self.title = ""
        self.start_state: str | InlineStart | None = None
        self.step_budget: int = DEFAULT_BUDGET
        self.instructions: dict[str, str] = dict.fromkeys(GRANULARITIES, "")
        self.goal: ReachSpec | None = None
        self.flag_conditions: list[FlagSpec] = []
        self.combine: Combine = "all_of"  # how goal and flags combine; "sequence" keeps the picking order
        self.route: list[RouteStep] = []
        self._goal_step: Goto | None = None  # the route's last step, put there by record_goal
        self.reference_steps: int | None = None
        self.last_capture: StateSample | None = None  # what "flags changed since the last capture" compares to
        self.header = HEADER
        self.sig_changed = EventHook("changed")

    @classmethod
    def for_builtin_world(cls) -> TaskDraft:
        _, starts = world_start_states()
        return cls(profile_flags(), list(starts))

    @classmethod
    def from_task(cls, task: Task, flag_names: Sequence[str], start_states: Sequence[str] | None = None) -> TaskDraft:
        """A draft holding an existing task, to edit it; success must be a goal and/or flags."""
        draft = cls(flag_names, start_states)
        draft.id, draft.quest, draft.category, draft.title = task.id, task.quest, task.category, task.title
        draft.start_state, draft.step_budget, draft.reference_steps = task.start_state, task.step_budget, \
            task.reference_steps
        draft.instructions = {g: task.instruction(g) for g in GRANULARITIES}
        draft.route = list(task.reference_route)
        draft.goal, draft.flag_conditions, draft.combine = _split_success(task.success)
        return draft

    # -- plain fields ----------------------------------------------------------------------
    def update(self, **values: Any) -> None:
        """Set id, quest, category, title, header, step_budget or reference_steps. Values are checked by
        validate(), so a half-typed id is kept, not refused."""
        for name, value in values.items():
            if name in _TEXT_FIELDS:
                setattr(self, name, str(value).strip())
            elif name in _NUMBER_FIELDS:
                setattr(self, name, None if value is None else int(value))
            elif name == "combine":
                if value not in ("all_of", "sequence"):
                    raise ValueError(f"combine must be 'all_of' or 'sequence', got {value!r}")
                self.combine = value
            else:
                raise ValueError(f"a draft has no field {name!r}; settable: "
                                 f"{[*_TEXT_FIELDS, *_NUMBER_FIELDS, 'combine']}")
        self.sig_changed.emit()

    def set_instructions(self, **texts: str) -> None:
        """visual_guided=..., step_guided=..., goal_only=... (any subset)."""
        unknown = set(texts) - set(GRANULARITIES)
        if unknown:
            raise ValueError(f"instructions are {list(GRANULARITIES)}, not {sorted(unknown)}")
        for granularity, text in texts.items():
            self.instructions[granularity] = text.strip()
        self.sig_changed.emit()

    # -- captures from the evaluator's samples ---------------------------------------------
    def set_baseline(self, sample: StateSample) -> None:
        """Compare later flag changes with this sample (every capture also becomes the baseline)."""
        self.last_capture = sample
        self.sig_changed.emit()

    def use_named_start(self, name: str) -> None:
        self.start_state = name.strip()
        self.sig_changed.emit()

    def capture_start(self, sample: StateSample) -> InlineStart:
        """The game as it is now becomes the task's start state, written inline in the task file."""
        if sample.dialogue_active:
            raise ValueError("a start state cannot begin inside a dialogue: finish talking, then capture")
        unnamed = [bit for bit in range(64) if sample.flags >> bit & 1 and bit >= len(self.flag_names)]
        if unnamed:
            raise ValueError(f"flag bits {unnamed} are set but the game profile names only "
                             f"{len(self.flag_names)} flags, so this state cannot be written down")
        start = InlineStart(pos=(_round(sample.x, 2), _round(sample.y, 2)), facing=_round(sample.facing, 1),
                            camera_yaw=_round(sample.camera_yaw, 1), camera_pitch=_round(sample.camera_pitch, 1),
                            flags=self.flags_set(sample))
        self.start_state = start
        self._captured(sample)
        return start

    def record_goal(self, sample: StateSample, radius: float | None = None, on_map: bool = False) -> ReachSpec:
        """"Record goal here": success needs the character within `radius` of this spot (the last radius,
        or 3 m, when not given). `on_map` also requires this sample's map id. The goal also ends the
        reference route (unless the route already ends there), so the route a try drives reaches it;
        recording the goal again moves that last step."""
        radius = radius if radius is not None else (self.goal.radius if self.goal else DEFAULT_RADIUS_M)
        self.goal = ReachSpec(x=_round(sample.x, 1), y=_round(sample.y, 1), radius=radius,
                              map_id=sample.map_id if on_map else None)
        if self._goal_step is not None and self.route and self.route[-1] is self._goal_step:
            self.route.pop()
        self._goal_step = None
        if self.route_end() != (self.goal.x, self.goal.y):
            self._goal_step = Goto(goto=(self.goal.x, self.goal.y))
            self.route.append(self._goal_step)
        self._captured(sample)
        return self.goal

    def route_end(self) -> tuple[float, float] | None:
        """Where the reference route leaves the character: its last goto, or its last interaction's approach."""
        if not self.route:
            return None
        last = self.route[-1]
        if isinstance(last, Goto):
            return (float(last.goto[0]), float(last.goto[1]))
        point = last.interact.approach or last.interact.target
        return (float(point[0]), float(point[1]))

    def route_gap(self) -> float | None:
        """How far outside the goal radius the route ends (metres), or None when it ends inside it (or there
        is no goal, or no route). Saving warns about a gap: "Try it" would stop short of the goal."""
        end = self.route_end()
        if self.goal is None or end is None:
            return None
        gap = math.hypot(end[0] - self.goal.x, end[1] - self.goal.y)
        return gap if gap > self.goal.radius else None

    def set_goal_radius(self, radius: float) -> None:
        if self.goal is None:
            raise ValueError("record a goal first")
        self.goal = ReachSpec.model_validate({**self.goal.model_dump(), "radius": radius})  # validated: radius > 0
        self.sig_changed.emit()

    def clear_goal(self) -> None:
        self.goal = None
        self.sig_changed.emit()

    def add_waypoint(self, sample: StateSample) -> Goto:
        """The current position becomes the next `goto` of the reference route (before the goal's step, which
        stays last)."""
        step = Goto(goto=(_round(sample.x, 1), _round(sample.y, 1)))
        self._add_step(step)
        self._captured(sample)
        return step

    def add_interact(self, sample: StateSample, ahead: float = INTERACT_AHEAD_M, presses: int = 12) -> Interact:
        """An `interact` step: approach the current position, then press A at whatever is in front."""
        # Headings: 0 faces +y (north) and positive turns counter-clockwise (docs/world-format.md).
        heading = math.radians(sample.facing)
        target = (_round(sample.x - math.sin(heading) * ahead, 1), _round(sample.y + math.cos(heading) * ahead, 1))
        step = Interact(interact=InteractSpec(target=target, approach=(_round(sample.x, 1), _round(sample.y, 1)),
                                              presses=presses))
        self._add_step(step)
        self._captured(sample)
        return step

    def _add_step(self, step: RouteStep) -> None:
        if self._goal_step is not None and self.route and self.route[-1] is self._goal_step:
            self.route.insert(len(self.route) - 1, step)  # the recorded goal ends the route
        else:
            self.route.append(step)

    def remove_route_step(self, index: int) -> None:
        del self.route[index]
        self.sig_changed.emit()

    def _captured(self, sample: StateSample) -> None:
        self.last_capture = sample
        self.sig_changed.emit()

    # -- flags -----------------------------------------------------------------------------
    def flags_set(self, sample: StateSample) -> list[str]:
        return [name for bit, name in enumerate(self.flag_names) if sample.flags >> bit & 1]

    def flags_changed(self, previous: StateSample, current: StateSample) -> list[str]:
        """Named flags that differ between two samples, in bit order. Bits the profile does not name
        cannot be used in a condition, so they are left out."""
        changed = previous.flags ^ current.flags
        return [name for bit, name in enumerate(self.flag_names) if changed >> bit & 1]

    def flags_changed_since_capture(self, current: StateSample) -> list[str]:
        return [] if self.last_capture is None else self.flags_changed(self.last_capture, current)

    def add_flag_condition(self, name: str, equals: bool = True) -> None:
        """Success also needs this flag to have this value (picked from flags_changed, usually)."""
        if name not in self.flag_names:
            raise ValueError(f"unknown flag {name!r}; the game profile defines {self.flag_names}")
        self.flag_conditions = [f for f in self.flag_conditions if f.name != name] + [FlagSpec(name=name,
                                                                                               equals=equals)]
        self.sig_changed.emit()

    def remove_flag_condition(self, name: str) -> None:
        self.flag_conditions = [f for f in self.flag_conditions if f.name != name]
        self.sig_changed.emit()

    # -- the task --------------------------------------------------------------------------
    def success_data(self) -> dict[str, Any] | None:
        """The success condition as written in the file, or None when there is neither goal nor flag."""
        flags = [{"flag": f.model_dump(exclude_defaults=True)} for f in self.flag_conditions]
        reach = [{"reach": self.goal.model_dump(exclude_none=True)}] if self.goal is not None else []
        parts = flags + reach if self.combine == "sequence" else reach + flags  # the goal comes last in a sequence
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else {self.combine: parts}

    def to_data(self) -> dict[str, Any]:
        """The task file's mapping, keys in the suite's order; what is missing is left out, so that
        validation names it."""
        data: dict[str, Any] = {"format_version": 1}
        for key in ("id", "quest", "category", "title"):
            if getattr(self, key):
                data[key] = getattr(self, key)
        if isinstance(self.start_state, InlineStart):
            data["start_state"] = self.start_state.to_reset()
        elif self.start_state:
            data["start_state"] = self.start_state
        data["step_budget"] = self.step_budget
        data["instructions"] = {g: self.instructions[g] for g in GRANULARITIES if self.instructions[g]}
        success = self.success_data()
        if success is not None:
            data["success"] = success
        if self.route:
            data["reference_route"] = [step.model_dump(mode="json", exclude_defaults=True) for step in self.route]
        if self.reference_steps is not None:
            data["reference_steps"] = self.reference_steps
        return data

    def to_yaml(self) -> str:
        body = yaml.dump(self.to_data(), Dumper=_TaskDumper, sort_keys=False, width=YAML_WIDTH, allow_unicode=True)
        return f"{self.header}\n{body}"

    def validate(self, path: Path | None = None) -> Task:
        """The task, checked as loading checks it (flags against the profile, start state names against
        the world, id against the file name); raises TaskFileError naming the file and line."""
        path = path if path is not None else Path(f"{self.id or 'untitled'}.yaml")
        return parse_task(self.to_yaml(), path, self.flag_names, self.start_states)


class _TaskDumper(yaml.SafeDumper):
    """Block style, except coordinate pairs and flag lists, which read best on one line: [x, y]."""


def _represent_list(dumper: yaml.SafeDumper, items: list[Any]) -> yaml.Node:
    scalars = all(isinstance(i, (int, float)) and not isinstance(i, bool) for i in items) or \
        all(isinstance(i, str) for i in items)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", items, flow_style=scalars)


_TaskDumper.add_representer(list, _represent_list)


def _round(value: float, digits: int) -> float:
    return round(float(value), digits) + 0.0  # + 0.0 turns -0.0 into 0.0, which reads better in the file


def _split_success(condition: Condition) -> tuple[ReachSpec | None, list[FlagSpec], Combine]:
    """Goal, flags and how they combine, for the conditions a draft can express."""
    if isinstance(condition, Reach):
        return condition.reach, [], "all_of"
    if isinstance(condition, Flag):
        return None, [condition.flag], "all_of"
    if isinstance(condition, (AllOf, SequenceCondition)):
        combine: Combine = "all_of" if isinstance(condition, AllOf) else "sequence"
        children = condition.all_of if isinstance(condition, AllOf) else condition.sequence
        reaches = [c.reach for c in children if isinstance(c, Reach)]
        flags = [c.flag for c in children if isinstance(c, Flag)]
        goal_last = combine == "all_of" or not reaches or isinstance(children[-1], Reach)
        if len(reaches) + len(flags) == len(children) and len(reaches) <= 1 and goal_last:
            return (reaches[0] if reaches else None), flags, combine
    raise ValueError("this task's success condition is more than a goal and flags; edit it in the file")
