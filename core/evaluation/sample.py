"""StateSample: one reading of the game's ground truth. The evaluator makes these; agents never see them."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

SAMPLE_FORMAT_VERSION = 1


@dataclass(frozen=True, slots=True)
class StateSample:
    time: float          # evaluator wall clock (time.time()), seconds
    tick: int            # the game's own tick counter, or -1 when the profile has none
    map_id: int
    x: float
    y: float
    z: float
    facing: float
    camera_yaw: float
    camera_pitch: float
    flags: int
    dialogue_active: bool

    @classmethod
    def from_values(cls, values: dict[str, Any], now: float) -> StateSample:
        return cls(
            time=now, tick=int(values.get("tick", -1)), map_id=int(values.get("map_id", 0)),
            x=float(values["x"]), y=float(values["y"]), z=float(values.get("z", 0.0)),
            facing=float(values.get("facing", 0.0)), camera_yaw=float(values.get("camera_yaw", 0.0)),
            camera_pitch=float(values.get("camera_pitch", 0.0)), flags=int(values.get("flags", 0)),
            dialogue_active=bool(values.get("dialogue_active", 0)),
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StateSample:
        return cls(**{name: data[name] for name in cls.__dataclass_fields__})

    def has_flag(self, bit: int) -> bool:
        return bool(self.flags >> bit & 1)
