"""Left and right views for the agent: by turning the camera (as in an emulator), or instantly (built-in only).

"turn" turns the camera left, captures, turns right past the start, captures, and turns back. It costs
game time, as it would in Legends: Z-A on Ryujinx, and that time is reported so the runner can record
it with the step. "instant" asks the built-in world to render other yaws without advancing the game;
no emulator can do that, so results that used it are marked as such and are not comparable with
emulator results.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.game.connection import Capability, GameConnection
from core.game.errors import UnsupportedCapabilityError
from core.game.frames import Frame

SIDE_VIEW_MODES = ("turn", "instant")


@dataclass(frozen=True)
class SideViews:
    left: Frame
    right: Frame
    mode: str          # "turn" or "instant"
    degrees: float     # how far each view is turned from the current one
    game_seconds: float  # game time the views cost (0 for instant views)


def capture_side_views(game: GameConnection, mode: str = "turn", degrees: float = 90.0) -> SideViews:
    if mode not in SIDE_VIEW_MODES:
        raise ValueError(f"side view mode must be one of {SIDE_VIEW_MODES}, got {mode!r}")
    capabilities = game.info.capabilities
    if mode == "instant":
        if Capability.EXTRA_VIEWS not in capabilities:
            raise UnsupportedCapabilityError(f"{game.info.name} cannot render views without turning its camera; "
                                             "use side views by turning")
        left, right = game.extra_views([-degrees, degrees])
        return SideViews(left, right, mode, degrees, 0.0)
    turn = getattr(game, "turn_camera", None)
    if turn is None or Capability.TURN_CAMERA not in capabilities:
        raise UnsupportedCapabilityError(f"{game.info.name} cannot turn its camera by an angle")
    spent = turn(-degrees)
    left = game.latest_frame()
    try:
        spent += turn(2 * degrees)
        right = game.latest_frame()
    finally:
        spent += turn(-degrees)  # back where the agent was looking, whatever happened in between
    return SideViews(left, right, mode, degrees, spent)
