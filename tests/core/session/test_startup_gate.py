"""Start-up turns shared by the processes of one machine (Ray's episodes are processes of their own)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from core.paths import PROJECT_ROOT
from core.session.startup_gate import NODE_POLL_S, NodeStartupGate

HOLDER = """
import sys
sys.path.insert(0, {root!r})
from pathlib import Path
from core.session.startup_gate import NodeStartupGate
with NodeStartupGate(1, Path({folder!r})).turn(lambda: False) as admitted:
    print("HOLDING" if admitted else "REFUSED", flush=True)
    sys.stdin.readline()
"""


@contextlib.contextmanager
def _holder(folder: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process, holding a turn until it is killed."""
    with subprocess.Popen([sys.executable, "-c", HOLDER.format(root=str(PROJECT_ROOT), folder=str(folder))],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as holder:
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "HOLDING"
            yield holder
        finally:
            holder.kill()


def _after_polls(count: int):
    """A stopping() that says stop after `count` questions (the gate asks once per try of the slots)."""
    asked = [0]

    def stopping() -> bool:
        asked[0] += 1
        return asked[0] > count

    return stopping


def test_a_turn_held_by_another_process_is_waited_for_and_freed_when_that_process_is_killed(tmp_path):
    folder = tmp_path / "turns"
    gate = NodeStartupGate(1, folder)
    with _holder(folder) as holder:
        with gate.turn(_after_polls(3)) as admitted:  # three tries, NODE_POLL_S apart: the slot stays taken
            assert not admitted
        holder.kill()  # killed holding its turn: the kernel lets go of the lock
        holder.wait(10)
        with gate.turn(_after_polls(int(30 / NODE_POLL_S))) as admitted:
            assert admitted
            with NodeStartupGate(1, folder).turn(_after_polls(1)) as again:  # and holds it in turn
                assert not again


def test_two_slots_admit_two_processes_at_once(tmp_path):
    folder = tmp_path / "turns"
    with _holder(folder), NodeStartupGate(2, folder).turn(_after_polls(1)) as admitted:
        assert admitted


def test_a_turn_folder_others_could_enter_is_not_used(tmp_path):
    folder = tmp_path / "turns"
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)
    with NodeStartupGate(1, folder).turn(_after_polls(1)) as admitted:
        assert admitted  # turns taken within this process instead
    assert list(folder.iterdir()) == []
