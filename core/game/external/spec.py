"""The `external:` part of a backend file (assets/backends/NAME.yaml): launch, frames, input, start states.

Pure data, validated by pydantic; docs/backend-format.md describes every field. Strings may hold
placeholders filled in at launch: {runtime} (a private folder per launch), {backend_dir}, {display},
{port} (a free local UDP port), {width}, {height}, {home}, {cache} and {env:NAME}.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from core.game.errors import GameStartError
from core.game.pad import Button, PadState

_PLACEHOLDER = re.compile(r"\{([a-z_]+(?::[A-Za-z0-9_]+)?)\}")


class PlaceholderError(GameStartError, ValueError):
    """A placeholder that has no value (an unknown name, or an environment variable that is not set)."""


@dataclass
class Substitutions:
    values: dict[str, str] = field(default_factory=dict[str, str])

    def fill(self, text: str) -> str:
        def one(match: re.Match[str]) -> str:
            name = match.group(1)
            if name.startswith("env:"):
                variable = name[4:]
                if variable not in os.environ:
                    raise PlaceholderError(f"the backend needs the environment variable {variable} "
                                           f"(used as {{{name}}}); set it and try again")
                return os.environ[variable]
            if name not in self.values:
                raise PlaceholderError(f"unknown placeholder {{{name}}}; known: "
                                       f"{', '.join('{' + k + '}' for k in sorted(self.values))}, {{env:NAME}}")
            return self.values[name]

        return _PLACEHOLDER.sub(one, text)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class FileCopy(_Model):
    """Copy a file or a folder into place before launch (a world template, a config, a save-data folder)."""

    source: str = Field(alias="from")
    to: str
    template: bool = False  # fill placeholders inside the (text) file while copying


class VersionCheck(_Model):
    """Refuse a game build other than the one the memory profile was made for."""

    args: list[str] = ["--version"]
    pattern: str = Field(description="regex whose first group is the version, searched in the output")
    expect: str

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, text: str) -> str:
        try:
            if re.compile(text).groups < 1:
                raise ValueError("the pattern needs one group () around the version")
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from None
        return text


class Ready(_Model):
    window: bool = True                 # wait for the frame window to appear
    log_file: str | None = None         # and for this text in this file (truncated before launch)
    log_text: str | None = None
    # Texts that, in log_file or the game's own output, mean start-up failed: the wait ends at once with that line.
    fail_text: list[str] = []
    timeout_s: float = Field(default=60.0, gt=0, le=600)
    settle_s: float = Field(default=0.5, ge=0, le=60)  # after ready: terrain and HUD need a moment to draw
    stable_s: float = Field(default=0.0, ge=0, le=30)  # then wait until the picture has not changed for this long


class InputConfig(_Model):
    """An emulator's own controller binding, checked (or fixed) before every launch."""

    kind: Literal["ryujinx"]
    path: str                         # Ryujinx's Config.json
    player: str = "Player1"
    write: bool = False               # rewrite a wrong controller id (a backup is made first)


class Launch(_Model):
    executable: str
    search_paths: list[str] = []        # looked in after PATH (Debian puts games in /usr/games)
    args: list[str] = []
    working_dir: str | None = None
    env: dict[str, str] = {}
    files: list[FileCopy] = []
    version: VersionCheck | None = None
    input_config: InputConfig | None = None
    ready: Ready = Ready()
    stop_grace_s: float = Field(default=5.0, ge=0, le=60)


class Attach(_Model):
    pid: int | None = None
    process_name: str | None = None


class Display(_Model):
    # auto: our own Xvfb where it is installed, else $DISPLAY; always: our own Xvfb; never: $DISPLAY or fail
    xvfb: Literal["auto", "always", "never"] = "auto"
    screen: str = Field(default="1024x768x24", pattern=r"^\d+x\d+x\d+$")


class GameAudio(_Model):
    # private: a sound server of our own with one null sink (the game's sound alone, never the user's speakers);
    # system: the user's own sound server's default output (everything it plays); none: no sound.
    source: Literal["private", "system", "none"] = "none"
    rate: int = Field(default=48000, ge=8000, le=192000)
    channels: Literal[1, 2] = 2
    latency_ms: int = Field(default=20, ge=5, le=500)  # the recorder's buffer: lower is sooner, costlier


class Crop(_Model):
    left: int = Field(default=0, ge=0)
    top: int = Field(default=0, ge=0)
    right: int = Field(default=0, ge=0)
    bottom: int = Field(default=0, ge=0)


class Frames(_Model):
    window_title: str = Field(description="regex matched against window titles")
    width: int = Field(default=640, ge=16, le=1920)    # the benchmark resolution frames are scaled to
    height: int = Field(default=360, ge=16, le=1080)
    crop: Crop = Crop()                         # pixels cut from the window's edges (title bars, borders)
    fps: float = Field(default=30.0, gt=0, le=240)
    method: Literal["auto", "mss", "xgetimage", "windows-capture"] = "auto"
    stall_timeout_s: float = Field(default=10.0, gt=0, le=600)  # no changed frame this long: the game is declared dead

    @field_validator("window_title")
    @classmethod
    def _regex(cls, text: str) -> str:
        try:
            re.compile(text)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from None
        return text


KEY_NAME = r"^(mouse[1-5]|[A-Za-z0-9_]+)$"


class StickKeys(_Model):
    up: str = Field(pattern=KEY_NAME)
    down: str = Field(pattern=KEY_NAME)
    left: str = Field(pattern=KEY_NAME)
    right: str = Field(pattern=KEY_NAME)
    threshold: float = Field(default=0.5, gt=0, lt=1)  # deflection beyond which the key is held


class Mouse(_Model):
    right_stick_px_per_s: float = Field(gt=0, le=20000)  # pointer speed at full right-stick deflection
    degrees_per_px: float = Field(gt=0)                   # the game's camera turn per pixel (exact turns)
    invert_y: bool = False


class Keyboard(_Model):
    left_stick: StickKeys | None = None
    right_stick: StickKeys | None = None       # keys for the camera, when the game has no mouse look
    buttons: dict[Button, str] = {}

    @field_validator("buttons")
    @classmethod
    def _key_names(cls, buttons: dict[Button, str]) -> dict[Button, str]:
        for button, key in buttons.items():
            if not re.match(KEY_NAME, key):
                raise ValueError(f"{button.value}: {key!r} is not a key name (X keysym such as space, or mouse1-5)")
        return buttons


PAD_BUTTON_NAMES = ("A", "B", "X", "Y", "LB", "RB", "LT", "RT", "START", "BACK", "LS", "RS",
                    "DPAD_UP", "DPAD_DOWN", "DPAD_LEFT", "DPAD_RIGHT")
DEFAULT_PAD_BUTTONS = {Button.A: "A", Button.B: "B", Button.X: "X", Button.Y: "Y", Button.L: "LB", Button.R: "RB",
                       Button.ZL: "LT", Button.ZR: "RT", Button.PLUS: "START", Button.MINUS: "BACK",
                       Button.DPAD_UP: "DPAD_UP", Button.DPAD_DOWN: "DPAD_DOWN", Button.DPAD_LEFT: "DPAD_LEFT",
                       Button.DPAD_RIGHT: "DPAD_RIGHT"}


class Input(_Model):
    device: Literal["xtest", "uinput", "vgamepad", "pad"]  # pad: uinput on Linux, vgamepad on Windows
    focus_settle_s: float = Field(default=0.6, ge=0, le=10)  # input right after focusing is swallowed (FACTS)
    keyboard: Keyboard | None = None
    mouse: Mouse | None = None
    chat_key: str | None = Field(default=None, pattern=KEY_NAME)  # opens the game's chat, for `chat:` macro steps
    turn_degrees_per_s: float | None = Field(default=None, gt=0)  # pads: camera speed at full right stick
    # pads: PadState button -> the virtual pad's button (A B X Y LB RB LT RT START BACK DPAD_UP ...)
    pad_buttons: dict[Button, str] = {}

    @field_validator("pad_buttons")
    @classmethod
    def _pad_names(cls, mapping: dict[Button, str]) -> dict[Button, str]:
        for button, name in mapping.items():
            if name not in PAD_BUTTON_NAMES:
                raise ValueError(f"{button.value}: {name!r} is not a pad button; use one of "
                                 f"{', '.join(PAD_BUTTON_NAMES)}")
        return mapping

    @model_validator(mode="after")
    def _complete(self) -> Input:
        if self.device == "xtest" and self.keyboard is None and self.mouse is None:
            raise ValueError("an xtest device needs a keyboard and/or mouse mapping")
        return self


class MacroStep(_Model):
    """One step of a start-state macro: exactly one of pad, turn_degrees, key, chat, wait_s."""

    pad: dict[str, object] | None = None
    seconds: float = Field(default=0.1, gt=0, le=60)
    turn_degrees: float | None = None
    key: str | None = Field(default=None, pattern=KEY_NAME)  # xtest: press and release one key (an X keysym name)
    chat: str | None = None
    wait_s: float | None = Field(default=None, gt=0, le=60)

    @model_validator(mode="after")
    def _one_kind(self) -> MacroStep:
        kinds = [k for k in ("pad", "turn_degrees", "key", "chat", "wait_s") if getattr(self, k) is not None]
        if len(kinds) != 1:
            raise ValueError("a macro step has exactly one of pad, turn_degrees, key, chat, wait_s "
                             f"(got {kinds or 'none'})")
        if self.pad is not None:
            PadState.from_dict(self.pad)  # raises InvalidPadError, a ValueError, with the field named
        return self


class StartCheck(_Model):
    """Whether the game really started where the state says, checked after its macro (a teleport, a console
    command) has run: by the evaluator's position where a memory profile reads the game, else by the picture
    at rest against a reference frame. A failed check starts the game again, then fails with the distance."""

    position: tuple[float, float] | tuple[float, float, float] | None = None  # the evaluator's x, y[, z]
    tolerance: float = Field(default=1.0, gt=0)             # in the memory profile's units
    image: str | None = None                                 # a PNG of the frame at rest, relative to the file
    image_tolerance: float = Field(default=0.05, gt=0, le=1)  # mean absolute difference, 0-1 of full scale
    rest_s: float = Field(default=0.5, ge=0, le=30)          # wait before judging (a teleport's fade, a fall)
    retries: int = Field(default=2, ge=0, le=10)             # fresh starts after a failed check

    @model_validator(mode="after")
    def _something_to_check(self) -> StartCheck:
        if self.position is None and self.image is None:
            raise ValueError("a start check needs a position (with a memory profile) and/or an image "
                             "(`python main.py backend record-start` prints both)")
        return self


class StartState(_Model):
    restore: list[FileCopy] = []     # copied before launch, replacing what is there (world or save data)
    macro: list[MacroStep] = []      # after the game is ready
    relaunch: bool = True            # a fresh game process per episode (the only honest reset for most games)
    check: StartCheck | None = None  # where the state must have put the player


class ExternalSpec(_Model):
    launch: Launch | None = None
    attach: Attach | None = None
    display: Display = Display()
    audio: GameAudio = GameAudio()
    frames: Frames
    input: Input
    start_states: dict[str, StartState] = {}
    default_start: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> ExternalSpec:
        if self.launch is None and self.attach is None:
            raise ValueError("say how to reach the game: `launch` (start it) and/or `attach` (a running one)")
        if self.default_start is not None and self.default_start not in self.start_states:
            raise ValueError(f"default_start {self.default_start!r} is not one of the start_states "
                             f"{sorted(self.start_states)}")
        return self
