"""Starting, finding and ending an external game's process, as the backend file says.

The game is started as our child, in its own session: a terminal's Ctrl+C then reaches only us (we
end it in order), and its process group holds exactly what we must end later. Under Yama
`ptrace_scope=1` only an ancestor may read a process's memory, and our evaluator is a sibling of
the game, not its ancestor, so the game is started through a two-line exec wrapper that first calls
prctl(PR_SET_PTRACER, our pid): our descendants (the evaluator) may then read it.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from core import paths
from core.game.errors import GameStartError
from core.game.external.processes import end_process_group
from core.game.external.spec import ExternalSpec, FileCopy, Substitutions
from core.game.external.xvfb import Xvfb

PR_SET_PTRACER = 0x59616D61
_PTRACER_EXEC = (f"import ctypes,os,sys;ctypes.CDLL(None).prctl({PR_SET_PTRACER},int(sys.argv[1]),0,0,0);"
                 "os.execvp(sys.argv[2],sys.argv[2:])")


class VersionMismatchError(GameStartError):
    """The installed game is not the build the memory profile was made for."""


def yama_scope() -> int | None:
    try:
        return int(Path("/proc/sys/kernel/yama/ptrace_scope").read_text().strip())
    except (OSError, ValueError):
        return None


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def find_executable(name: str, search_paths: list[str]) -> str:
    if os.path.isabs(name):
        if os.access(name, os.X_OK):
            return name
        raise GameStartError(f"the game executable {name} does not exist or is not executable")
    found = shutil.which(name) or shutil.which(name, path=os.pathsep.join(search_paths))
    if found is None:
        where = ", ".join(["PATH", *search_paths])
        raise GameStartError(f"the game executable {name!r} was not found (looked in {where}). Install it "
                             "(for Minetest on Debian/Ubuntu: apt-get install minetest) or give its full path "
                             "in the backend file's launch.executable")
    return found


def check_version(executable: str, args: list[str], pattern: str, expect: str, what: str) -> str:
    try:
        result = subprocess.run([executable, *args], capture_output=True, text=True, timeout=30,
                                env={**os.environ, "DISPLAY": ""})
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GameStartError(f"could not ask {executable} for its version: {exc}") from None
    match = re.search(pattern, result.stdout + result.stderr, re.MULTILINE)
    if match is None:
        raise VersionMismatchError(f"{executable} did not report a version matching {pattern!r}; the {what} "
                                   f"was made for version {expect} and is refused for an unknown build")
    found = match.group(1)
    if found != expect:
        raise VersionMismatchError(
            f"{executable} is version {found}, but the {what} was made for version {expect}: memory "
            f"signatures and offsets do not carry over between builds, so it is refused. Install {expect}, or "
            f"make a profile for {found} (docs/profile-format.md; the memory finder does most of it)")
    return found


def copy_into_place(copy: FileCopy, subs: Substitutions, base: Path, replace: bool) -> None:
    source = Path(subs.fill(copy.source))
    source = source if source.is_absolute() else base / source
    target = Path(subs.fill(copy.to))
    if not source.exists():
        raise GameStartError(f"the backend copies {source}, which does not exist")
    if replace and target.exists():
        shutil.rmtree(target) if target.is_dir() and not target.is_symlink() else target.unlink()
    target.parent.mkdir(parents=True, exist_ok=True)
    if source.is_dir():
        shutil.copytree(source, target, dirs_exist_ok=True)
    elif copy.template:
        target.write_text(subs.fill(source.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        shutil.copy2(source, target)


@dataclass
class Started:
    process: subprocess.Popen[bytes]
    output_path: Path
    command: list[str]


class Launcher:
    """One game's launches: the display (reused across restarts), then each process in turn."""

    def __init__(self, spec: ExternalSpec, backend_dir: Path, runtime_dir: Path, width: int, height: int,
                 extra_files: tuple[FileCopy, ...] = ()) -> None:
        if spec.launch is None:
            raise GameStartError("this backend has no `launch` section; attach to a running game instead")
        self.spec = spec
        self.launch_spec = spec.launch
        self.backend_dir = backend_dir
        self.runtime_dir = runtime_dir
        self.extra_files = extra_files
        self.xvfb: Xvfb | None = None
        self.display: str | None = None
        self.subs = Substitutions({"runtime": str(runtime_dir), "backend_dir": str(backend_dir),
                                   "width": str(width), "height": str(height), "home": str(Path.home()),
                                   # kept between launches, only to start faster (a game's compiled shaders)
                                   "cache": str(paths.user_cache_dir()),
                                   "display": "", "port": "0", "sound": "false"})
        self.extra_env: dict[str, str] = {}  # what the harness adds (PULSE_SERVER for a private sound server)
        self.executable = ""
        self.launches = 0

    def prepare_display(self) -> str | None:
        """The X display the game will use: ours (Xvfb) or the user's; None on Windows."""
        if sys.platform == "win32":
            return None
        mode = self.spec.display.xvfb
        # auto prefers our own server even on a desktop: there nothing the user does (the studio raised over
        # the game, a notification) can cover the game, so the agent's frames are the game's alone. The
        # user's display is the fallback only where Xvfb is missing.
        if mode == "always" or (mode == "auto" and (shutil.which("Xvfb") or not os.environ.get("DISPLAY"))):
            self.xvfb = Xvfb.start(self.spec.display.screen)
            self.display = self.xvfb.display
        else:
            from core.game.external.x11 import check_session

            self.display = check_session(None)
        self.subs.values["display"] = self.display
        return self.display

    def check_version(self, expect: str | None, what: str) -> str | None:
        self.executable = find_executable(self.subs.fill(self.launch_spec.executable), self.launch_spec.search_paths)
        check = self.launch_spec.version
        if check is None:
            return None
        return check_version(self.executable, check.args, check.pattern, expect or check.expect, what)

    def start(self, restore: list[FileCopy]) -> Started:
        """Put the files in place (config, then the start state's world or save data) and start the game."""
        spec = self.launch_spec
        if not self.executable:
            self.executable = find_executable(self.subs.fill(spec.executable), spec.search_paths)
        self.subs.values["port"] = str(free_udp_port())
        for copy in spec.files:
            copy_into_place(copy, self.subs, self.backend_dir, replace=False)
        for copy in restore:
            copy_into_place(copy, self.subs, self.backend_dir, replace=True)
        for copy in self.extra_files:
            copy_into_place(copy, self.subs, self.backend_dir, replace=False)
        if spec.ready.log_file:
            log = Path(self.subs.fill(spec.ready.log_file))
            log.parent.mkdir(parents=True, exist_ok=True)
            log.write_text("")  # the game appends; an old "ready" line must not count
        env = {**os.environ, **{k: self.subs.fill(v) for k, v in spec.env.items()}, **self.extra_env}
        if self.display is not None:
            env["DISPLAY"] = self.display
        for key in ("HOME", "XDG_CACHE_HOME", "MESA_SHADER_CACHE_DIR"):
            if key in spec.env:
                Path(env[key]).mkdir(parents=True, exist_ok=True)
        command = [self.executable, *(self.subs.fill(a) for a in spec.args)]
        if yama_scope() == 1 and sys.platform.startswith("linux"):
            command = [sys.executable, "-S", "-E", "-c", _PTRACER_EXEC, str(os.getpid()), *command]
        self.launches += 1
        output_path = self.runtime_dir / f"game-output-{self.launches}.log"
        cwd = Path(self.subs.fill(spec.working_dir)) if spec.working_dir else self.runtime_dir
        with open(output_path, "wb") as output:
            try:
                process = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=output,
                                           stderr=subprocess.STDOUT, start_new_session=True)
            except OSError as exc:
                raise GameStartError(f"could not start {command[0]}: {exc}") from None
        return Started(process, output_path, command)

    def stop(self, started: Started) -> None:
        end_process_group(started.process, self.launch_spec.stop_grace_s)

    def close(self) -> None:
        if self.xvfb is not None:
            self.xvfb.stop()
            self.xvfb = None


def describe_output(started: Started, log: Path | None = None, limit: int = 1500) -> str:
    parts: list[str] = []
    for path in (started.output_path, log):
        if path is None:
            continue
        try:
            text = path.read_text(errors="replace").strip()
        except OSError:
            continue
        if text:
            parts.append(f"Last lines of {path.name}:\n{text[-limit:]}")
    return "\n".join(parts) or "(it printed nothing)"
