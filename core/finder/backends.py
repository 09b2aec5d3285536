"""Which game the finder drives: a backend name or file, turned into a launcher.

    with resolve("minetest") as backend:       # or "builtin", or a path to a backend file
        game = backend.launch()                # a fresh game process: pid and hold(pad, seconds)
        ...
        game = backend.launch()                # another fresh process (the game is restarted)

The built-in world is launched anew for each process (it starts in about a second, headless).
Any other backend runs under its own lifecycle through one BackendSession: the first launch
starts the game as the backend file says (in our own Xvfb when there is no display), every further
launch restarts it (`BackendSession.restart`: a fresh process with the start state restored, on
the same display), and input goes through the backend's own mapping (for Minetest, XTEST keys for
the left stick and mouse motion for the camera). The finder needs no evaluator, so none is started.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.finder.motion import Closable, GameLauncher, MotionPlan
from core.game.pad import PadState

if TYPE_CHECKING:  # loaded lazily below, as everything about backend files is here
    from core.backends.profile import BackendProfile


class BackendError(ValueError):
    """A backend that cannot be used from here; the message says why and what to use instead."""


@dataclass
class Backend:
    name: str
    game: str
    game_version: str | None
    launch: GameLauncher
    plan: MotionPlan
    start_state: str | None = None
    realtime: bool = False
    _close: Callable[[], None] = field(default=lambda: None, repr=False)

    def close(self) -> None:
        """End whatever game process the launcher still runs (and its display, if it started one)."""
        self._close()

    def __enter__(self) -> Backend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _builtin_launcher(start_state: str | None, world: Any = None) -> Callable[[], Closable]:
    def launch() -> Closable:
        from core.game.builtin import BuiltinWorld

        kwargs = {"world": world} if world is not None else {}
        game = BuiltinWorld.launch(renderer="software", **kwargs)
        if start_state:
            game.reset(start_state)
        return game

    return launch


def builtin_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"pokegym-studio {version('pokegym-studio')}"
    except PackageNotFoundError:
        return "pokegym-studio (source tree)"


class SessionProcess:
    """One process of a game run by a BackendSession, as the finder sees it. Closing it releases it
    (the next launch restarts the game); driving it after the game was restarted is refused."""

    def __init__(self, session: Any) -> None:
        self._session = session
        self._pid = int(session.game.pid)
        self.closed = False

    @property
    def pid(self) -> int:
        return self._pid

    @property
    def game(self) -> Any:
        return self._session.game

    def hold(self, pad: PadState, seconds: float) -> Any:
        from core.game.errors import GameError

        if self.closed or self._session.game.pid != self._pid:
            raise GameError(f"game process {self._pid} was released or restarted; drive the current one")
        return self._session.game.hold(pad, seconds)

    def close(self) -> None:
        self.closed = True


class SessionLauncher:
    """Fresh game processes from one BackendSession: the first call starts the game, each further call
    restarts it. close() ends the game (and our Xvfb, if we started one)."""

    def __init__(self, backend: Any, start_state: str | None = None, extra_files: Sequence[Any] = ()) -> None:
        self.backend = backend
        self.start_state = start_state
        self.extra_files = tuple(extra_files)
        self.session: Any = None
        self.current: SessionProcess | None = None
        self.launches = 0

    def __call__(self) -> SessionProcess:
        from core.backends.session import BackendSession

        if self.session is None:
            self.session = BackendSession.open(self.backend, start_state=self.start_state, with_evaluator=False,
                                               extra_files=self.extra_files)
        else:
            if self.current is not None:
                self.current.close()
            self.session.restart(self.start_state)
        self.launches += 1
        self.current = SessionProcess(self.session)
        return self.current

    def close(self) -> None:
        session, self.session = self.session, None
        if session is not None:
            session.close()


def resolve(spec: str, start_state: str | None = None, extra_files: Sequence[Any] = ()) -> Backend:
    """A backend by name ('builtin', 'minetest', ...: assets/backends/NAME.yaml) or backend file path.

    `start_state`: where each fresh process starts (default: the backend's default start state; the
    built-in world's plaza). `extra_files`: more files to copy into place before every launch of an
    external game (the tests add their ground-truth world mod this way)."""
    from core.backends.profile import BackendFileError, load_backend

    try:
        profile = load_backend(spec)
    except BackendFileError as exc:
        raise BackendError(str(exc)) from None
    if profile.kind == "builtin":
        if extra_files:
            raise BackendError("extra files are copied for external games only")
        start = start_state or "plaza"
        world = profile.resolve(profile.builtin_spec.world)
        return Backend(profile.name, "Harborvale (the built-in PokeGym world)", builtin_version(),
                       _builtin_launcher(start, world), finder_plan(profile), start)
    external = profile.external
    assert external is not None
    if external.launch is None:
        raise BackendError(f"the {profile.name} backend has no `launch` section, so the finder cannot start or "
                           "restart its game; start the game yourself and scan it with --pid (find-flag, scan)")
    start = start_state or external.default_start
    if start is not None and start not in external.start_states:
        raise BackendError(f"unknown start state {start!r} for {profile.name}; the backend defines "
                           f"{sorted(external.start_states)}")
    version = external.launch.version.expect if external.launch.version is not None else None
    launcher = SessionLauncher(profile, start, extra_files)

    return Backend(profile.name, profile.title, version, launcher, finder_plan(profile), start,
                   realtime=True, _close=launcher.close)


def finder_plan(profile: BackendProfile) -> MotionPlan:
    """The finder's protocol on this backend's game, for the command line and the studio alike: the default for the
    built-in world (lockstep), the real-time one for an external game."""
    return external_plan(profile.step_settle_s) if profile.kind == "external" else MotionPlan()


def external_plan(step_settle_s: float) -> MotionPlan:
    """The protocol for a real-time game: the pad rests at least the backend's `step_settle_s` after each step.

    A game whose character slides on after the stick is released (Red Eclipse's momentum: about 0.7 s) is still
    moving during a 'stand' step that starts 0.4 s after a walk, and the true position is then thrown out as
    noise; the backend already says how long its game needs to come to rest after an action."""
    default = MotionPlan()
    return MotionPlan(settle_seconds=max(default.settle_seconds, step_settle_s))
