"""Backend files (assets/backends/NAME.yaml): which game, how to reach it, and which memory profile reads it.

See docs/backend-format.md. Loading validates the whole file and reports every problem with the
file name and line, like task files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from core.agents.actions import STANDARD_SPEC, ActionSet, ActionSetSpec
from core.evaluation.profile import Profile, ProfileError, load_profile
from core.game.external.spec import ExternalSpec
from core.game.motion import MotionCalibration
from core.paths import ASSETS_DIR, user_backends_dir
from core.yaml_file import explain, parse_yaml

BACKEND_FORMAT_VERSION = 1
BACKENDS_DIR = ASSETS_DIR / "backends"
SideViewMode = Literal["turn", "instant"]


class BackendFileError(ValueError):
    """A backend file that cannot be used; the message names the file and line."""


class NoMemoryProfileError(BackendFileError):
    """Something that needs ground truth (a task, `tasks validate`, an evaluator) asked a backend that has no
    memory profile yet (`memory_profile: none`); the message names the memory finder's command."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BuiltinSpec(_Model):
    world: str = "../worlds/town/world.yaml"
    renderer: Literal["auto", "software", "hardware"] = "software"
    mode: Literal["lockstep", "realtime"] = "lockstep"
    audio: Literal["on", "off"] = "on"  # off: a silent world (no synthesis, no audio ring)

    @field_validator("audio", mode="before")
    @classmethod
    def _yaml_switch(cls, value: object) -> object:
        """YAML reads a bare on/off as a boolean; both spellings mean the same here."""
        return {True: "on", False: "off"}.get(value, value) if isinstance(value, bool) else value


class SideViews(_Model):
    # turn: turn the camera, capture, turn back (costs game time, as in an emulator); instant: the built-in
    # world renders other yaws without advancing (only it can). Runs meant to compare with emulator results
    # use turn.
    default: SideViewMode = "turn"
    degrees: float = Field(default=90.0, gt=0, le=180)


class Validation(_Model):
    """How `tasks validate` judges this backend's reference routes (real-time games are not deterministic)."""

    arrive_m: float = Field(default=0.6, gt=0)          # the driver counts a waypoint reached within this distance
    steps_tolerance: float = Field(default=0.0, ge=0)   # reference_steps may differ by this fraction between runs
    retries: int = Field(default=0, ge=0, le=5)         # drive a failed route again (fresh start) before failing it


class BackendProfile(_Model):
    format_version: Literal[1]
    name: str = Field(pattern=r"^[a-z0-9_]+$")
    title: str
    kind: Literal["builtin", "external"]
    # Relative to this file; `none` (or null): no profile yet. The game then runs, shows and records, and the
    # memory finder works on it, but nothing can judge it (docs/backend-format.md#no-memory-profile-yet).
    memory_profile: str | None
    step_settle_s: float = Field(default=0.0, ge=0, le=10)  # wait after each action before judging (real-time games)
    side_views: SideViews = SideViews()
    validation: Validation = Validation()
    # The actions agents choose from (docs/actions.md): the standard set unless the game needs its own.
    actions: ActionSetSpec = STANDARD_SPEC
    # How far sticks move the character on open ground, for the continuous ineffective-move threshold
    # (core/game/motion.py; measured by `python main.py backend calibrate NAME --write`).
    continuous_motion: MotionCalibration | None = None
    builtin: BuiltinSpec | None = None
    external: ExternalSpec | None = None
    notes: str = ""
    path: Path = Field(default=Path(), exclude=True)    # set by the loader

    @field_validator("memory_profile", mode="before")
    @classmethod
    def _none_word(cls, value: object) -> object:
        return None if isinstance(value, str) and value.strip().lower() == "none" else value

    @model_validator(mode="after")
    def _kind_section(self) -> BackendProfile:
        if self.kind == "builtin" and self.external is not None:
            raise ValueError("a builtin backend has no `external` section")
        if self.kind == "external" and self.external is None:
            raise ValueError("an external backend needs an `external` section (launch/attach, frames, input)")
        return self

    @property
    def directory(self) -> Path:
        return self.path.parent

    def resolve(self, relative: str) -> Path:
        path = Path(relative).expanduser()
        return path if path.is_absolute() else (self.directory / path).resolve()

    @property
    def has_memory_profile(self) -> bool:
        return self.memory_profile is not None

    @property
    def memory_profile_path(self) -> Path:
        """The memory profile's file; NoMemoryProfileError, naming the finder's command, when there is none."""
        if self.memory_profile is None:
            raise NoMemoryProfileError(no_profile_message(self))
        return self.resolve(self.memory_profile)

    def action_set(self) -> ActionSet:
        """The actions an agent plays this game with (`actions:`, else the standard set)."""
        return ActionSet(self.actions)

    @property
    def builtin_spec(self) -> BuiltinSpec:
        return self.builtin or BuiltinSpec()

    @property
    def start_states(self) -> list[str] | None:
        """Named start states, or None for the built-in world (its world file lists them)."""
        if self.external is not None:
            return list(self.external.start_states)
        return None


def no_profile_message(backend: BackendProfile) -> str:
    where = backend.path if backend.path != Path() else backend.name
    out = backend.directory / f"{backend.name}_profile.yaml"
    return (f"the {backend.name} backend has no memory profile yet (memory_profile: none in {where}), so nothing "
            f"can judge a task on it. Find one with `python main.py memory signature --backend {where} --out {out}` "
            "(docs/finding-memory.md), then set memory_profile to that file")


def parse_backend(text: str, path: Path) -> BackendProfile:
    try:
        data, root = parse_yaml(text, path)
    except ValueError as exc:
        raise BackendFileError(str(exc)) from None
    if not isinstance(data, dict):
        raise BackendFileError(f"{path}:1: a backend file holds one mapping (format_version, name, kind, ...)")
    try:
        backend = BackendProfile.model_validate({**data, "path": path})
    except ValidationError as exc:
        what = f"backend (format {BACKEND_FORMAT_VERSION})"
        raise BackendFileError(explain(path, root, exc, what, BackendProfile)) from None
    if backend.name != path.stem:
        raise BackendFileError(f"{path}:1: name {backend.name!r} must match the file name {path.stem!r}")
    return backend


def is_backend_path(text: str) -> bool:
    """Whether a backend is given as a file (a path, or a name ending in .yaml) rather than by name."""
    return text.endswith((".yaml", ".yml")) or "/" in text or "\\" in text


def backend_path(name_or_path: str | Path) -> Path:
    """A backend name (a file NAME.yaml in assets/backends/, else in the user's folder, POKEGYM_HOME/backends/)
    or a path to a backend file."""
    text = str(name_or_path)
    if is_backend_path(text):
        return Path(text).expanduser()
    for folder in (BACKENDS_DIR, user_backends_dir()):
        path = folder / f"{text}.yaml"
        if path.exists():
            return path
    raise BackendFileError(f"no backend named {text!r} in {BACKENDS_DIR} or {user_backends_dir()} (set "
                           f"POKEGYM_HOME to move the latter); known backends: {', '.join(known_backends())} "
                           "(or give a path to a backend file)")


def command_argument(backend: BackendProfile) -> str:
    """How a command line names this backend: its name where the name finds this very file, else its path.

    A hint such as `backend record-start NAME` fails for a backend file kept outside the folders names are
    looked up in (a user's ~/games/my_game/my_game.yaml), so hints name that file instead."""
    try:
        found = backend_path(backend.name)
    except BackendFileError:
        return str(backend.path)
    return backend.name if found.resolve() == backend.path.resolve() else str(backend.path)


def load_backend(name_or_path: str | Path = "builtin") -> BackendProfile:
    path = backend_path(name_or_path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise BackendFileError(f"cannot read backend file {path}: {exc.strerror}") from None
    return parse_backend(text, path.resolve())


def known_backends() -> list[str]:
    """The names of the project's backends and the user's (POKEGYM_HOME/backends)."""
    return sorted({p.stem for folder in (BACKENDS_DIR, user_backends_dir()) for p in folder.glob("*.yaml")})


def with_memory_profile(backend: BackendProfile, profile: Path | str | None) -> BackendProfile:
    """The backend read through another memory profile file (`--profile`, e.g. one the memory finder wrote), in
    place of the one its file names (or of none); unchanged when `profile` is None."""
    if profile is None:
        return backend
    path = Path(profile).expanduser().resolve()
    if not path.is_file():
        looked = f" (looked for {path})" if str(path) != str(profile) else ""
        raise BackendFileError(f"the memory profile {profile} given for the {backend.name} backend does not "
                               f"exist{looked}")
    return backend.model_copy(update={"memory_profile": str(path)})


def memory_profile_of(backend: BackendProfile) -> Profile | None:
    """The backend's memory profile, or None when it has none yet (`memory_profile: none`)."""
    return load_profile(backend.memory_profile_path) if backend.has_memory_profile else None


def position_units(backend: BackendProfile) -> str | None:
    """What the backend's positions are in (its memory profile's `units`), or None: no profile yet, the profile
    does not say, or it cannot be read (the commands that need it say why)."""
    try:
        profile = memory_profile_of(backend)
    except ProfileError:
        return None
    return profile.position_units if profile is not None else None
