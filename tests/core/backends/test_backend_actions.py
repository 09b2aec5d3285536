"""The action set belongs to the backend file: a backend without one plays the standard set, a memory profile
holds memory only (an old one with `actions:` still loads), and a profile the memory finder wrote works as a
backend's memory profile as written."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from core.agents.actions import ActionSet
from core.backends.profile import BackendFileError, load_backend, parse_backend
from core.backends.session import BackendSession
from core.evaluation.profile import load_profile
from core.finder import profile_writer
from core.finder.signature import Pick
from core.memory.pattern import parse_pattern
from core.paths import ASSETS_DIR, DEFAULT_WORLD, PROJECT_ROOT

STANDARD = ["MoveForward", "MoveBackward", "MoveLeft", "MoveRight", "RotateLeft", "RotateRight", "LookUp",
            "LookDown", "Interact", "Cancel", "Wait"]


def _backend_text(memory_profile: str, extra: str = "") -> str:
    return textwrap.dedent(f"""\
        format_version: 1
        name: my_game
        title: My game
        kind: builtin
        memory_profile: {memory_profile}
        builtin: {{world: {DEFAULT_WORLD}, renderer: software, mode: lockstep, audio: off}}
        """) + extra


@pytest.mark.parametrize("actions", ["", "actions: {}\n", "actions:\n"])
def test_a_backend_without_actions_plays_the_standard_set(tmp_path, actions):
    backend = parse_backend(_backend_text("p.yaml", actions), tmp_path / "my_game.yaml")
    chosen = backend.action_set()
    assert chosen.names == STANDARD
    assert chosen.movement == {"MoveForward", "MoveBackward", "MoveLeft", "MoveRight"}
    assert chosen.spec.continuous.max_seconds == 2.0


def test_the_shipped_backends_carry_their_own_actions_and_profiles_none():
    assert load_backend("builtin").action_set().names == STANDARD
    minetest = load_backend("minetest").action_set()
    assert "Jump" in minetest.names and "Interact" not in minetest.names
    assert minetest.spec.continuous.min_seconds == 0.05
    for profile in (ASSETS_DIR / "profiles").glob("*.yaml"):
        assert "\nactions:" not in profile.read_text(), profile


def test_only_the_limits_can_be_changed_and_a_wrong_movement_name_is_shown_with_its_line(tmp_path):
    path = tmp_path / "my_game.yaml"
    limits = parse_backend(_backend_text("p.yaml", "actions: {continuous: {min_seconds: 0.1}}\n"), path)
    assert limits.action_set().names == STANDARD and limits.actions.continuous.min_seconds == 0.1
    text = _backend_text("p.yaml", "actions:\n  movement: [MoveForward, Fly]\n")
    with pytest.raises(BackendFileError) as caught:
        parse_backend(text, path)
    line = text.splitlines().index("  movement: [MoveForward, Fly]") + 1
    assert f"{path}:{line}: actions.movement.1: 'Fly' is not one of the discrete actions" in str(caught.value)


def test_an_old_profile_with_actions_still_loads_and_they_are_ignored(tmp_path):
    old = (ASSETS_DIR / "profiles" / "builtin_world.yaml").read_text()
    for actions in ("actions: {}\n", "actions: {discrete: {}}\n", "actions: {discrete: {Fly: {macro: []}}}\n"):
        path = tmp_path / "old.yaml"
        path.write_text(old + actions)
        assert load_profile(path).fields["x"].offset == 24
    assert ActionSet.from_data({}).names == STANDARD  # data with no file of its own: {} is the standard set too


def _found_profile(folder: Path) -> Path:
    """What `memory signature` writes for the built-in world: its block's magic as the signature, no actions."""
    draft = profile_writer.ProfileDraft("found", "Harborvale", None,
                                        Pick(parse_pattern("50 4B 47 59 4D 5A A5 01"), start=-24, literals=8,
                                             anchor=8, score=1.0),
                                        vertical=2, observed=(0.0, -9.0, 0.0), provenance=["written by a test"])
    path = folder / "found.yaml"
    profile_writer.write(path, profile_writer.build(draft), draft)
    return path


def test_a_found_profile_is_a_backends_memory_profile_as_written(tmp_path):
    _found_profile(tmp_path)
    assert "actions" not in (tmp_path / "found.yaml").read_text()
    path = tmp_path / "my_game.yaml"
    path.write_text(_backend_text("found.yaml"))
    with BackendSession.open(load_backend(path)) as session:
        session.prepare("plaza")
        assert session.actions.names == STANDARD
        sample = session.evaluator.latest()
        assert (sample.x, sample.y) == pytest.approx((0.0, -9.0), abs=1e-3)  # the plaza start, read through it


def test_a_command_that_fails_on_a_users_file_says_so_in_words_not_a_traceback(tmp_path):
    path = tmp_path / "my_game.yaml"
    path.write_text(_backend_text("missing.yaml"))
    done = subprocess.run([sys.executable, "main.py", "run", "--backend", str(path), "--agent", "random",
                           "--out", str(tmp_path / "run")], cwd=PROJECT_ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [f"error: cannot read profile {tmp_path / 'missing.yaml'}: "
                                                "No such file or directory"]
