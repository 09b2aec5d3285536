"""The foreign C games (tests/targets/foreign_game.c, ring_game.c): compiled with gcc at test time, driven over a pipe.

`ForeignGame` is test scaffolding for a real process, not a mock of memory: it turns the
finder's pad holds into the target's stdin commands, as a backend turns them into key presses.
The JSON line of addresses the target prints is kept in `truth` for assertions only.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from core.game.pad import PadState

SOURCE = Path(__file__).parent / "targets" / "foreign_game.c"
RING_SOURCE = Path(__file__).parent / "targets" / "ring_game.c"
TICK_HZ = 30


def compile_target(folder: Path, source: Path = SOURCE) -> Path:
    if shutil.which("gcc") is None:
        pytest.skip("gcc is needed to build the foreign C target (apt-get install -y gcc)")
    binary = folder / source.stem
    subprocess.run(["gcc", "-O1", "-g0", "-fPIE", "-pie", "-o", str(binary), str(source), "-lm"], check=True,
                   capture_output=True, timeout=120)
    return binary


class ForeignGame:
    """A running foreign_game process: hold(pad, seconds), press(), pid, close()."""

    def __init__(self, binary: Path, *args: str) -> None:
        self.process = subprocess.Popen([str(binary), *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True, bufsize=1)
        assert self.process.stdout is not None
        self.truth: dict[str, Any] = json.loads(self.process.stdout.readline())
        self.holds: list[tuple[PadState, float]] = []

    @property
    def pid(self) -> int:
        return self.process.pid

    def _ask(self, line: str) -> str:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        reply = self.process.stdout.readline().strip()
        assert reply.startswith("ok"), f"the target answered {reply!r} to {line!r}"
        return reply

    def hold(self, pad: PadState, seconds: float) -> int:
        self.holds.append((pad, seconds))
        ticks = max(1, round(seconds * TICK_HZ))
        return int(self._ask(f"hold {pad.left_x} {pad.left_y} {pad.right_x} {pad.right_y} {ticks}").split()[1])

    def turn(self, degrees: float) -> int:
        """Turn the camera right (ring_game only)."""
        return int(self._ask(f"turn {degrees}").split()[1])

    def reset(self) -> int:
        """Back to the spawn point, facing the start (ring_game only)."""
        return int(self._ask("reset").split()[1])

    def where(self) -> tuple[float, float, float]:
        """Where the game's own position is, as the target stores it (ring_game only; for assertions)."""
        x, y, z = (float(v) for v in self._ask("where").split()[1:4])
        return x, y, z

    def press(self, *_: object) -> int:
        return int(self._ask("press").split()[1])

    def set(self, name: str, value: float) -> None:
        self._ask(f"set {name} {value}")

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                assert self.process.stdin is not None
                self.process.stdin.write("quit\n")
                self.process.stdin.close()
            except (BrokenPipeError, OSError):
                pass
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        if self.process.stdout is not None:
            self.process.stdout.close()

    def __enter__(self) -> ForeignGame:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@pytest.fixture(scope="session")
def foreign_binary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The foreign target, compiled once per test session."""
    return compile_target(tmp_path_factory.mktemp("foreign"))


@pytest.fixture(scope="session")
def ring_binary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The many-copies target (ring_game.c), compiled once per test session."""
    return compile_target(tmp_path_factory.mktemp("ring"), RING_SOURCE)
