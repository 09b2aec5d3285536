"""Success conditions over state samples, and the judge that follows them through an episode.

YAML forms (docs/task-format.md):
    reach: {x: 10, y: -4, radius: 3, map_id: 1}
    flag: {name: talked_baker, equals: true}
    all_of: [cond, ...]      every condition holds in the same sample
    any_of: [cond, ...]      at least one holds
    sequence: [cond, ...]    each holds at some moment, in this order (progress is kept)
"""

from __future__ import annotations

import math
from typing import Union

from pydantic import BaseModel, ConfigDict, Field

from core.evaluation.sample import StateSample


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ReachSpec(_Model):
    x: float
    y: float
    radius: float = Field(gt=0)
    map_id: int | None = None


class FlagSpec(_Model):
    name: str
    equals: bool = True


class Reach(_Model):
    reach: ReachSpec


class Flag(_Model):
    flag: FlagSpec


class AllOf(_Model):
    all_of: list[Condition] = Field(min_length=1)


class AnyOf(_Model):
    any_of: list[Condition] = Field(min_length=1)


class Sequence(_Model):
    sequence: list[Condition] = Field(min_length=1)


Condition = Union[Reach, Flag, AllOf, AnyOf, Sequence]  # noqa: UP007 - pydantic needs the Union for recursion
for _model in (AllOf, AnyOf, Sequence):
    _model.model_rebuild()


def flags_named(condition: Condition) -> set[str]:
    if isinstance(condition, Flag):
        return {condition.flag.name}
    if isinstance(condition, Reach):
        return set()
    return set[str]().union(*(flags_named(c) for c in sub_conditions(condition)))


def sub_conditions(condition: AllOf | AnyOf | Sequence) -> list[Condition]:
    """The conditions a group combines, whichever kind of group it is."""
    if isinstance(condition, AllOf):
        return condition.all_of
    if isinstance(condition, AnyOf):
        return condition.any_of
    return condition.sequence


class Judge:
    """Follows one condition through a stream of samples; success latches once reached."""

    def __init__(self, condition: Condition, flag_bits: dict[str, int]) -> None:
        unknown = flags_named(condition) - set(flag_bits)
        if unknown:
            raise ValueError(f"the condition names flags the game profile does not define: {sorted(unknown)}")
        self.condition = condition
        self.flag_bits = flag_bits
        self._progress: dict[int, int] = {}  # id(sequence node) -> how many steps are done
        self.succeeded = False

    def update(self, sample: StateSample) -> bool:
        if not self.succeeded:
            self.succeeded = self._holds(self.condition, sample)
        return self.succeeded

    def progress(self) -> dict[int, int]:
        return dict(self._progress)

    def _holds(self, condition: Condition, sample: StateSample) -> bool:
        if isinstance(condition, Reach):
            spec = condition.reach
            if spec.map_id is not None and sample.map_id != spec.map_id:
                return False
            return math.hypot(sample.x - spec.x, sample.y - spec.y) <= spec.radius
        if isinstance(condition, Flag):
            return sample.has_flag(self.flag_bits[condition.flag.name]) == condition.flag.equals
        if isinstance(condition, AllOf):
            return all(self._holds(c, sample) for c in condition.all_of)
        if isinstance(condition, AnyOf):
            return any(self._holds(c, sample) for c in condition.any_of)
        done = self._progress.get(id(condition), 0)
        while done < len(condition.sequence) and self._holds(condition.sequence[done], sample):
            done += 1
        self._progress[id(condition)] = done
        return done == len(condition.sequence)
