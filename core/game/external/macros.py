"""Start-state macros: pad holds, exact camera turns, key presses, chat lines and waits, after the game is ready."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.game.errors import GameStartError
from core.game.external.inputs import XTestInput
from core.game.external.spec import MacroStep
from core.game.pad import PadState

if TYPE_CHECKING:
    from core.game.external.game import ExternalGame


def run_macro(game: ExternalGame, macro: list[MacroStep]) -> None:
    for step in macro:
        if step.pad is not None:
            game.hold(PadState.from_dict(step.pad), step.seconds)
        elif step.turn_degrees is not None:
            game.turn_camera(step.turn_degrees)
        elif step.wait_s is not None:
            game.wait_alive(step.wait_s)
        elif step.chat is not None:
            chat(game, step.chat)
        elif step.key is not None:
            if not isinstance(game.input, XTestInput):
                raise GameStartError("key macro steps need the xtest input device")
            game.ensure_focus()
            game.input.press_key(step.key)
            game.wait_alive(0.2)

def chat(game: ExternalGame, text: str) -> None:
    if not isinstance(game.input, XTestInput) or not game.spec.input.chat_key:
        raise GameStartError("chat macro steps need the xtest input device and input.chat_key")
    game.ensure_focus()
    game.input.press_key(game.spec.input.chat_key)
    game.wait_alive(0.3)  # the chat box opens on the next frame
    game.input.type_text(text)
    game.input.press_key("Return")
    game.wait_alive(0.3)
