"""Finding a running game to attach to, by the backend's attach section."""

from __future__ import annotations

from pathlib import Path

from core.game.errors import GameStartError
from core.game.external.spec import ExternalSpec


def find_process(spec: ExternalSpec) -> int:
    """The pid of the running game named by the backend's attach section."""
    attach = spec.attach
    if attach is not None and attach.pid is not None:
        return attach.pid
    name = attach.process_name if attach is not None else None
    if not name:
        raise GameStartError("say which process to attach to: --pid, or attach.process_name in the backend file")
    matches: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "comm").read_text().strip() == name[:15]:
                matches.append(int(entry.name))
        except OSError:
            continue
    if not matches:
        raise GameStartError(f"no running process is named {name!r}; start the game first, or let PokeGym "
                             "launch it (recommended: a child process can be read even under ptrace_scope=1)")
    if len(matches) > 1:
        raise GameStartError(f"{len(matches)} processes are named {name!r} (pids {matches}); give --pid")
    return matches[0]
