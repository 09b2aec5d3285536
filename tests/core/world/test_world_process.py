"""The world as a process: determinism across launches, a clean death, no second copy of the signature."""

from __future__ import annotations

import hashlib
import os
import signal
import time
from pathlib import Path

import pytest

from core.evaluation.locate import candidates
from core.game.builtin import BuiltinWorld
from core.game.errors import GameDiedError
from core.game.pad import Button, PadState
from core.memory.pattern import parse_pattern
from core.memory.readers import LinuxReader
from core.memory.scanner import RegionFilter, scan
from tests.conftest import attach_ground_truth

A = frozenset({Button.A})
SCRIPT = [  # walk to Orin, talk through his dialogue, run off, back up, look around
    (PadState(left_x=0.93, left_y=0.36), 1.4), (PadState(buttons=A), 0.1), (PadState(), 0.1),
    (PadState(buttons=A), 0.1), (PadState(), 0.1), (PadState(buttons=A), 0.1),
    (PadState(left_y=1.0, right_y=-0.4, buttons=frozenset({Button.B})), 1.0),
    (PadState(left_x=-0.6, left_y=-0.8), 0.7), (PadState(right_x=-1.0, right_y=1.0), 0.5),
]


def _run_script(profile) -> list[tuple[bytes, str, str]]:
    with BuiltinWorld.launch(renderer="software") as world:
        truth = attach_ground_truth(world, profile)
        step = world.reset("plaza_north")
        trace = []
        for pad, seconds in SCRIPT:
            before, step = step, world.hold(pad, seconds)
            sound = world.audio_ticks(before.tick + 1, step.tick).samples.tobytes()
            trace.append((truth.raw(), hashlib.sha256(world.latest_frame().pixels.tobytes()).hexdigest(),
                          hashlib.sha256(sound).hexdigest()))
        return trace


def test_two_lockstep_runs_with_the_same_inputs_are_bit_identical(builtin_profile):
    first = _run_script(builtin_profile)
    second = _run_script(builtin_profile)
    assert [block for block, _, _ in first] == [block for block, _, _ in second]
    assert [frame for _, frame, _ in first] == [frame for _, frame, _ in second]
    assert [sound for _, _, sound in first] == [sound for _, _, sound in second]  # what was heard, too
    # Every step shows something new, except the two button releases and the closed dialogue,
    # which looks exactly like the first step again.
    assert len({frame for _, frame, _ in first}) == len(SCRIPT) - 3


def test_a_killed_world_gives_a_clear_error_on_the_next_call():
    world = BuiltinWorld.launch(renderer="software")
    try:
        world.reset("plaza")
        os.kill(world.pid, signal.SIGKILL)
        started = time.monotonic()
        with pytest.raises(GameDiedError, match=rf"world process \(pid {world.pid}\) .*SIGKILL.*Start a new one"):
            world.hold(PadState(left_y=1.0), 0.5)
        assert time.monotonic() - started < 10
        with pytest.raises(GameDiedError):
            world.latest_frame()
    finally:
        world.close()


def test_the_world_keeps_exactly_one_copy_of_its_signature(world, builtin_profile):
    """The signature is assembled at run time, so a full scan finds the live block and nothing else."""
    world.reset("plaza")
    reader = LinuxReader(world.pid)
    matches = scan(reader, parse_pattern(builtin_profile.signature.pattern), RegionFilter(perms="r"))
    assert len(matches) == 1
    assert [c.address for c in candidates(reader, builtin_profile)] == [matches[0].address]


def test_the_shipped_profile_names_the_worlds_flags_in_bit_order(builtin_profile):
    import yaml

    from core.paths import DEFAULT_WORLD

    world_flags = yaml.safe_load(DEFAULT_WORLD.read_text())["flags"]
    assert builtin_profile.flags == world_flags


def test_a_world_launched_by_a_client_exits_with_that_client_and_leaves_nothing_behind(tmp_path):
    """An orphaned world and evaluator must not linger: each watches its owner's pid, exits, and removes
    the private folder its owner made (the world's holds the frame ring in /dev/shm)."""
    import json
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent("""
        import json, sys
        from core.evaluation.client import EvaluatorClient
        from core.game.builtin import BuiltinWorld
        world = BuiltinWorld.launch(renderer="software")
        evaluator = EvaluatorClient.launch(world.pid)
        print(json.dumps({"world": [world.pid, str(world._runtime_dir)],
                          "evaluator": [evaluator.pid, str(evaluator._runtime_dir)]}), flush=True)
        sys.stdin.readline()
    """)
    # `with`: the owner's pipes are closed and it is reaped however this part ends.
    with subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          text=True, cwd=os.getcwd()) as owner:
        try:
            launched = json.loads(owner.stdout.readline())
            folders = {name: Path(folder) for name, (_, folder) in launched.items()}
            assert (folders["world"] / "frames.bin").is_file()  # the frame ring, in the owner's private folder
        finally:
            owner.kill()
    for name, (pid, _) in launched.items():
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and not _gone(pid):
            time.sleep(0.1)
        if not _gone(pid):
            os.kill(pid, signal.SIGKILL)
            pytest.fail(f"the {name} outlived its owner by 15 s")
    leftovers = {name: sorted(p.name for p in folder.iterdir()) for name, folder in folders.items() if folder.exists()}
    assert not leftovers, f"left behind in /dev/shm after the owner died: {leftovers}"


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return _is_zombie(pid)


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split()[2] == "Z"
    except FileNotFoundError:
        return True
