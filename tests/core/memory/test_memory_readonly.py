"""Read-only by construction: nothing in the memory finder or the readers can write into a game, and a
process we may not read is refused with the fix."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.paths import PROJECT_ROOT
from tests.foreign import ForeignGame

PACKAGES = ("core/memory", "core/finder", "core/evaluation", "core/cli/memory_cmd.py", "core/cli/memory_find_cmd.py")
WRITES = ("process_vm_writev", "WriteProcessMemory", "PTRACE_POKEDATA", "PTRACE_POKETEXT", "write_bytes",
          "VirtualProtectEx")


def sources() -> list[Path]:
    files = []
    for name in PACKAGES:
        path = PROJECT_ROOT / name
        files += [path] if path.is_file() else sorted(path.rglob("*.py"))
    return files


def test_no_code_path_can_write_into_another_process():
    offenders = []
    for path in sources():
        text = path.read_text()
        offenders += [f"{path.relative_to(PROJECT_ROOT)}: {word}" for word in WRITES if word in text
                      and not _only_in_docstrings(text, word)]
        for node in ast.walk(ast.parse(text)):
            # /proc/PID/mem may only ever be opened read-only.
            if isinstance(node, ast.Call) and any(isinstance(a, ast.Constant) and "/mem" in str(a.value)
                                                  for a in ast.walk(node)):
                flags = ast.unparse(node)
                if "O_RDWR" in flags or "O_WRONLY" in flags:
                    offenders.append(f"{path.relative_to(PROJECT_ROOT)}: {flags}")
    assert not offenders, offenders


def _only_in_docstrings(text: str, word: str) -> bool:
    code_lines = [line for line in text.splitlines() if word in line]
    return all(line.strip().startswith(("#", '"', "Nothing")) or "never" in line for line in code_lines)


def test_there_is_no_freeze_or_write_command():
    help_text = subprocess.run([sys.executable, "main.py", "memory", "--help"], cwd=PROJECT_ROOT,
                               capture_output=True, text=True, timeout=60).stdout
    actions = help_text.split("positional arguments:")[1]
    for word in ("freeze", "write", "set", "poke", "patch"):
        assert f"    {word}" not in actions


def _main_as_nobody(argv: list[str]) -> tuple[int, str]:
    """Run main.py's main(argv) in a forked child that has dropped to user nobody: (exit code, stderr)."""
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        os.close(read_end)
        os.dup2(write_end, 2)
        sys.stderr = os.fdopen(2, "w")  # pytest's capture replaced it; the child reports through the pipe
        code = 1
        try:
            # Everything the command imports, imported while the interpreter's files are still readable.
            import core.memory.scan_session
            import core.memory.valuescan  # noqa: F401
            from main import build_parser, main

            build_parser()
            os.setgid(65534)
            os.setuid(65534)
            code = main(argv)
        except BaseException as exc:  # noqa: BLE001 - reported to the parent through the pipe
            os.write(2, f"{type(exc).__name__}: {exc}".encode())
        finally:
            sys.stderr.flush()
            os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        report = pipe.read()
    _, status = os.waitpid(child, 0)
    return os.waitstatus_to_exitcode(status), report


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to drop to another user")
def test_a_process_we_may_not_read_is_refused_with_the_fix(foreign_binary, tmp_path):
    with ForeignGame(foreign_binary) as game:
        code, stderr = _main_as_nobody(["memory", "scan", "--pid", str(game.pid), "--session", str(tmp_path / "s"),
                                        "--type", "i32", "--value", "250"])
    assert not (tmp_path / "s").exists()  # refused before anything was written
    assert code == 3, stderr
    assert "not allowed to" in stderr and f"process {game.pid}" in stderr
    assert "same user" in stderr and "cap_sys_ptrace" in stderr
