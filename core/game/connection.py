"""GameConnection: what the harness may do with a game, whichever backend runs it.

Everything here is something an emulator can do too: look at the screen, hold pad
input, press buttons, reset. Save states and extra camera views are optional
capabilities: a backend lists the ones it has in `capabilities`, and the others raise
UnsupportedCapabilityError. Nothing here returns ground truth: positions and flags are
read from the game's memory by the evaluator, never through this interface.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal, Protocol, runtime_checkable

from core.audio.clip import AudioClip
from core.game.audio_ring import AudioFormat
from core.game.frames import Frame
from core.game.pad import Button, PadState


class Capability(str, Enum):
    LOCKSTEP = "lockstep"          # time advances only when asked; same inputs give same frames
    SAVE_STATES = "save_states"    # snapshot() / restore()
    EXTRA_VIEWS = "extra_views"    # render other camera yaws without advancing the game
    START_STATES = "start_states"  # reset(name) to a named spawn point
    LIVE_INPUT = "live_input"      # real time: set_pad() applies until changed
    MAP_OUTLINE = "map_outline"    # footprints for the studio's map backdrop (never shown to agents)
    TURN_CAMERA = "turn_camera"    # turn_camera(degrees): side views by turning the camera, costing game time
    STATE_TICK = "state_tick"      # StepResult and frame ticks are the tick the evaluator reads from memory
    AUDIO = "audio"                # the game's sound, per tick: audio_ticks() (docs/audio-ring.md)


@dataclass(frozen=True)
class StepResult:
    """What the game answers after input was applied."""

    frame_no: int
    tick: int


@dataclass(frozen=True)
class GameInfo:
    name: str
    pid: int
    mode: str  # "lockstep" or "realtime"
    tick_hz: float
    width: int
    height: int
    start_states: tuple[str, ...]
    capabilities: frozenset[Capability]
    audio: AudioFormat | None = None  # the sound's format, or None: the game is silent (or sound is off)
    # The game can make sound but was started silent on purpose (the built-in world's `audio: off`): the
    # difference between a recording's audio "off" and "unavailable".
    audio_switched_off: bool = False


# What a recording says of its sound (docs/episode-format.md): recorded, turned off by the user, or not
# offered by the game at all (an external game with no sound source, or whose sound capture failed).
AudioState = Literal["on", "off", "unavailable"]


def audio_state(info: GameInfo) -> AudioState:
    if Capability.AUDIO in info.capabilities and info.audio is not None:
        return "on"
    return "off" if info.audio_switched_off else "unavailable"


@runtime_checkable
class GameConnection(Protocol):
    """A live game the harness can observe and drive."""

    @property
    def info(self) -> GameInfo: ...

    @property
    def pid(self) -> int: ...

    def latest_frame(self) -> Frame:
        """The newest complete frame (a private copy)."""
        ...

    def hold(self, pad: PadState, seconds: float) -> StepResult:
        """Hold `pad` for `seconds` of game time, then release; returns the resulting frame number."""
        ...

    def press(self, button: Button, seconds: float = 0.1) -> StepResult:
        """Press and release one button."""
        ...

    def reset(self, start_state: str | Mapping[str, Any]) -> StepResult:
        """Return the game to a named start state, or (where the game can place the character freely,
        as the built-in world can) to one given as {pos, facing, camera_yaw, camera_pitch, flags}."""
        ...

    def snapshot(self) -> bytes:
        """Optional (SAVE_STATES): an opaque save state, like an emulator's. Store it; never parse it."""
        ...

    def restore(self, blob: bytes) -> StepResult:
        """Optional (SAVE_STATES): return to a state captured by snapshot()."""
        ...

    def extra_views(self, yaw_offsets_deg: Sequence[float]) -> list[Frame]:
        """Optional (EXTRA_VIEWS): the current state seen with the camera turned by each offset.

        Offsets are degrees clockwise seen from above: -90 is the left view, +90 the right.
        The game does not advance.
        """
        ...

    def turn_camera(self, degrees: float) -> float:
        """Optional (TURN_CAMERA): turn the camera by `degrees` (positive: right) through the game's own
        controls, as a player would. Returns the game time it cost, in seconds."""
        ...

    def audio_ticks(self, first_tick: int, last_tick: int) -> AudioClip:
        """Optional (AUDIO): the sound the game played during ticks first_tick..last_tick (inclusive): a step
        that went from tick t0 to t1 played t0 + 1..t1. Games without sound raise UnsupportedCapabilityError;
        ticks the game no longer (or not yet) holds raise AudioUnavailableError (docs/audio-ring.md)."""
        ...

    def close(self) -> None: ...
