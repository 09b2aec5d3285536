"""BackendSession: a game run under its backend's lifecycle, plus the evaluator that reads its memory.

This is what a caller (the batch runner, `tasks validate`, the studio, the memory finder) holds:

    with BackendSession.open(load_backend("minetest")) as session:
        session.prepare("spawn")            # a fresh game process in that start state, evaluator locked on
        session.game, session.evaluator     # a GameConnection and an EvaluatorClient
        session.game.pid                    # the game's pid (it changes when the game is restarted)
        session.restart()                   # a fresh game process; the evaluator follows it

External games are restarted per episode when their start state needs a fresh launch; the evaluator
is then started again for the new pid (an evaluator follows one process).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core.backends import start_check
from core.backends.profile import (
    BackendProfile,
    NoMemoryProfileError,
    command_argument,
    memory_profile_of,
    no_profile_message,
)
from core.evaluation.client import EvaluatorClient
from core.evaluation.profile import Profile
from core.game.connection import GameConnection
from core.game.errors import GameError, GameStartError
from core.game.external.spec import FileCopy
from core.memory.regions import MemoryAccessError, permission_advice

log = logging.getLogger(__name__)

# A lockstep game stands still between steps, and the runner asks for every step's sample when the step ends
# (core/evaluation/stepping.py): sampling it at the full rate while the agent waits for a model only reads the
# same state again (3,840 samples a second into one harness at 64 episodes). A batch episode's evaluator reads
# it this often on its own, besides the samples asked for.
LOCKSTEP_EVALUATOR_HZ = 2.0
FULL_EVALUATOR_HZ = 60.0


class BackendSession:
    def __init__(self, backend: BackendProfile, game: GameConnection, with_evaluator: bool,
                 evaluator_hz: float = FULL_EVALUATOR_HZ, evaluator_profile: Path | None = None) -> None:
        self.backend = backend
        self.game = game
        self.profile: Profile | None = memory_profile_of(backend)  # the game's own: its flags, its version
        # What the evaluator reads the game with: the backend's profile, or another (e.g. one the finder wrote).
        # None: the backend has no profile yet, so no evaluator runs and nothing is judged.
        self.evaluator_profile: Path | None = Path(evaluator_profile) if evaluator_profile else (
            backend.memory_profile_path if backend.has_memory_profile else None)
        self.actions = backend.action_set()
        self.evaluator: EvaluatorClient | None = None
        self._with_evaluator = with_evaluator and self.evaluator_profile is not None
        self._evaluator_hz = evaluator_hz
        self._evaluated_pid = 0
        self.restarts = 0
        self._unchecked_said: set[str] = set()

    # -- opening ------------------------------------------------------------------------
    @classmethod
    def open(cls, backend: BackendProfile, start_state: str | None = None, with_evaluator: bool = True,
             mode: str | None = None, extra_files: Sequence[FileCopy] = (), width: int | None = None,
             height: int | None = None, evaluator_profile: Path | None = None,
             evaluator_hz: float = FULL_EVALUATOR_HZ) -> BackendSession:
        """Launch the backend's game (as our child) and, unless told not to, its evaluator, which samples the
        game `evaluator_hz` times a second on its own (LOCKSTEP_EVALUATOR_HZ suits a lockstep batch episode)."""
        profile = memory_profile_of(backend)
        game: GameConnection
        if backend.kind == "builtin":
            from core.game.builtin import BuiltinWorld

            spec = backend.builtin_spec
            game = BuiltinWorld.launch(world=backend.resolve(spec.world), renderer=spec.renderer,
                                       mode=mode or spec.mode, width=width or 640, height=height or 360,
                                       audio=spec.audio)
        else:
            from core.game.external.game import ExternalGame

            assert backend.external is not None
            game = ExternalGame.launch(backend.external, backend.name, backend.directory, start_state=start_state,
                                       width=width, height=height,
                                       version_expect=profile.game_version if profile else None,
                                       extra_files=extra_files)
        session = cls(backend, game, with_evaluator, evaluator_hz, evaluator_profile)
        try:
            if session.judged:
                session.ensure_evaluator()
        except BaseException:
            session.close()
            raise
        return session

    @classmethod
    def attach_to(cls, backend: BackendProfile, target: str, with_evaluator: bool = True,
                  evaluator_profile: Path | None = None) -> BackendSession:
        """`--attach TARGET` as the command line gives it: for the built-in world the connection file that
        `python main.py world` printed; for an external game its pid, or "auto" to find it by the backend's
        `attach` section (process name or window title)."""
        if backend.kind == "builtin":
            if target == "auto":
                raise GameStartError("attaching to the built-in world needs the connection file that "
                                     "`python main.py world` printed: --attach PATH")
            return cls.attach(backend, connection_file=Path(target), with_evaluator=with_evaluator,
                              evaluator_profile=evaluator_profile)
        if target != "auto" and not target.isdigit():
            raise GameStartError(f"--attach takes the {backend.name} game's pid, or nothing to find it by the "
                                 f"backend's attach section; got {target!r}")
        return cls.attach(backend, pid=None if target == "auto" else int(target), with_evaluator=with_evaluator,
                          evaluator_profile=evaluator_profile)

    @classmethod
    def attach(cls, backend: BackendProfile, pid: int | None = None, connection_file: Path | None = None,
               with_evaluator: bool = True, evaluator_profile: Path | None = None) -> BackendSession:
        """Drive a game that is already running. Its memory must be readable by us (see the message if not).
        Closing the session leaves the game running: we did not start it."""
        game: GameConnection
        if backend.kind == "builtin":
            from core.game.builtin import BuiltinWorld

            if connection_file is None:
                raise GameStartError("attaching to the built-in world needs the connection file that "
                                     "`python main.py world` printed")
            game = BuiltinWorld.attach(connection_file)
        else:
            from core.game.external.game import ExternalGame

            assert backend.external is not None
            game = ExternalGame.attach(backend.external, backend.name, backend.directory, pid)
        session = cls(backend, game, with_evaluator, evaluator_profile=evaluator_profile)
        try:
            check_readable(game.pid)
            if session.judged:
                session.ensure_evaluator()
        except BaseException:
            session.close()
            raise
        return session

    @property
    def judged(self) -> bool:
        """Whether an evaluator reads this game: asked for, and a memory profile to read it with."""
        return self._with_evaluator

    # -- episodes -------------------------------------------------------------------------
    def prepare(self, start_state: str | dict[str, Any], lock_timeout: float = 60.0, check: bool = True) -> None:
        """Put the game in `start_state` (a fresh process where the backend needs one) and make sure the
        evaluator reads the process that now runs. A state with a `check:` is checked, and started again up to
        its `retries` times; StartCheckError says how far off it still was."""
        self.game.reset(start_state)
        if self._with_evaluator:
            self.ensure_evaluator(lock_timeout)
        if check and isinstance(start_state, str):
            self._check_start(start_state)

    def _check_start(self, start_state: str) -> None:
        spec = self.backend.external.start_states.get(start_state) if self.backend.external else None
        check = spec.check if spec is not None else None
        if check is None:
            return
        if self.evaluator is not None:  # one started by its owner (the studio's keeper) follows a fresh process too
            self.ensure_evaluator()
        reason = start_check.unchecked_reason(check, self.evaluator is not None)
        if reason is not None:
            if start_state not in self._unchecked_said:
                self._unchecked_said.add(start_state)
                log.warning("start state %r is not checked: %s", start_state, reason)
            return
        for attempt in range(check.retries + 1):
            wrong = start_check.problem(check, self.game, self.evaluator, self.backend.directory)
            if wrong is None:
                return
            if attempt == check.retries:
                raise start_check.StartCheckError(
                    f"start state {start_state!r} did not start where its check says after {attempt + 1} "
                    f"start(s): {wrong}. Check the state's macro, or record the start again with "
                    f"`python main.py backend record-start {command_argument(self.backend)} {start_state}`")
            log.warning("start state %r: %s; starting it again", start_state, wrong)
            self.restart(start_state)

    def restart(self, start_state: str | None = None) -> int:
        """A fresh game process (external games); returns its pid. The evaluator follows it."""
        restart = getattr(self.game, "restart", None)
        if restart is None:
            raise GameError(f"the {self.backend.name} backend cannot restart its game from here")
        pid = int(restart(start_state))
        self.restarts += 1
        if self._with_evaluator:
            self.ensure_evaluator()
        return pid

    def ensure_evaluator(self, lock_timeout: float = 60.0) -> EvaluatorClient:
        """An evaluator attached to the game's current process, locked onto its state. A backend without a
        memory profile has none: NoMemoryProfileError names the finder's command."""
        if self.evaluator_profile is None:
            raise NoMemoryProfileError(no_profile_message(self.backend))
        if self.evaluator is not None and self._evaluated_pid == self.game.pid and \
                self.evaluator.status.get("state") not in ("game_exited", "failed", "disconnected"):
            return self.evaluator
        if self.evaluator is not None:
            self.evaluator.close()
            self.evaluator = None
        evaluator = EvaluatorClient.launch(self.game.pid, self.evaluator_profile, hz=self._evaluator_hz)
        try:
            evaluator.wait_locked(lock_timeout)
        except BaseException:
            evaluator.close()
            raise
        self.evaluator, self._evaluated_pid = evaluator, self.game.pid
        return evaluator

    def settle(self) -> None:
        """Real-time games: let the game catch up after an action before it is judged."""
        if self.backend.step_settle_s > 0:
            time.sleep(self.backend.step_settle_s)

    # -- closing --------------------------------------------------------------------------
    def close(self) -> None:
        if self.evaluator is not None:
            with contextlib.suppress(Exception):
                self.evaluator.close()
            self.evaluator = None
        self.game.close()

    def __enter__(self) -> BackendSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def check_readable(pid: int) -> None:
    """Refuse early, with the fix, when this process may not read the game's memory (ptrace rules)."""
    from core.memory.readers import open_reader

    try:
        reader = open_reader(pid)
        try:
            regions = [r for r in reader.regions() if "r" in r.perms and "w" in r.perms]
            if regions:
                reader.read(regions[0].start, 16)
        finally:
            reader.close()
    except MemoryAccessError as exc:
        raise GameStartError(f"attached to pid {pid}, but its memory cannot be read, so no evaluator can judge "
                             f"it.\n{exc}") from None
    except PermissionError:
        raise GameStartError(permission_advice(pid)) from None
